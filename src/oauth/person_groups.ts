/**
 * The groups a person's last sign-in named, kept per subject: an ID-JAG without the groups
 * claim is judged by these (as a code-flow grant is judged by its sign-in's groups), read again
 * from the provider once older than `oauth.groupsMaxAge` as a refresh would, and a person who
 * never signed in here has none.
 */
import type { Clock } from "../core/clock.ts";
import type { Identity } from "../core/identity.ts";
import { KEYS } from "../store/keys.ts";
import type { Store } from "../store/store.ts";

interface GroupsRecord {
  groups: string[];
  at: number;
  expiresAt: number;
}

export class PersonGroups {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    /** How long a sign-in's groups stand in for an ID-JAG's: the refresh token's lifetime. */
    private readonly keepMs: number,
  ) {}

  /** Called at each sign-in that names groups. */
  async remember(identity: Identity): Promise<void> {
    if (identity.groups === undefined) return;
    const now = this.clock.now();
    const record: GroupsRecord = {
      groups: [...identity.groups],
      at: now,
      expiresAt: now + this.keepMs,
    };
    await this.store.set(KEYS.personGroups(identity.subject), record, record.expiresAt);
  }

  /** The groups of the person's last sign-in and when it was (`at`, the clock's ms). */
  async groupsOf(subject: string): Promise<{ groups: string[]; at: number } | undefined> {
    const record = await this.store.get<GroupsRecord>(KEYS.personGroups(subject));
    return record && record.expiresAt > this.clock.now()
      ? { groups: record.groups, at: record.at }
      : undefined;
  }
}
