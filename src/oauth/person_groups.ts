/**
 * The groups a person's last sign-in named, kept per subject: an ID-JAG without the groups
 * claim is judged by these (as a code-flow grant is judged by its sign-in's groups), and a
 * person who never signed in here has none.
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

  async groupsOf(subject: string): Promise<string[] | undefined> {
    const record = await this.store.get<GroupsRecord>(KEYS.personGroups(subject));
    return record && record.expiresAt > this.clock.now() ? record.groups : undefined;
  }
}
