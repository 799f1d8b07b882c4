/**
 * Grants as people and operators see them: listed by person, e-mail address or client through
 * the indexes (grant_records.ts), or all of them; revoked one by one or all of a person's or a
 * client's at once. /my/access uses it in the gateway; `gatehouse grants` uses it beside a
 * running gateway on the same storage, whose replicas pick each revocation up within the
 * revocation poll (revocations.ts).
 */
import type { Clock } from "../core/clock.ts";
import { parseClientId } from "../core/ids.ts";
import { KEYS } from "../store/keys.ts";
import type { Store, StoreKey } from "../store/store.ts";
import type { ClientDirectory } from "./client_directory.ts";
import { type FamilyRecord, familyWrites, isLive, withFacts } from "./grant_records.ts";
import type { GrantStore, RefreshRecord } from "./grants.ts";

/** One live grant, as a list shows it. */
export interface GrantView {
  id: string;
  /** Unknown only for a grant opened before these facts were kept and never refreshed since. */
  userId?: string;
  email?: string;
  clientId?: string;
  /** The client's registered name, when the client directory knows it. */
  clientName?: string;
  /** Service URIs. */
  audience: string[];
  grantedAt?: number;
  lastUsedAt?: number;
  expiresAt: number;
  /**
   * How it was issued: "authorization_code" (a person signed in and allowed it in a browser)
   * or "id-jag" (the company IdP's ID-JAG, with no browser and no refresh token).
   */
  issuedVia: "authorization_code" | "id-jag";
}

/** Whose grants: a person (by user id or e-mail address), a client, one grant, or every one. */
export type GrantSelector =
  | { user: string }
  | { email: string }
  | { client: string }
  | { grant: string }
  | { all: true };

export interface GrantAdminDeps {
  store: Store;
  clock: Clock;
  grants: GrantStore;
  clients: ClientDirectory;
}

/** Reads of family records at once while listing: bounded, so a big list does not flood storage. */
const READ_BATCH = 32;

export class GrantAdmin {
  constructor(private readonly deps: GrantAdminDeps) {}

  /** The live grants `selector` names, most recently used first. */
  async list(selector: GrantSelector): Promise<GrantView[]> {
    const now = this.deps.clock.now();
    const found = await this.#records(selector);
    const live = found.filter(([, record]) => isLive(record, now, this.deps.grants.accessMs));
    const names = new Map<string, string | undefined>();
    const views: GrantView[] = [];
    for (const [id, record] of live) {
      const clientId = record.clientId;
      if (clientId !== undefined && !names.has(clientId)) {
        names.set(clientId, await this.#clientName(clientId));
      }
      views.push(viewOf(id, record, clientId === undefined ? undefined : names.get(clientId)));
    }
    return views.sort((a, b) => recency(b) - recency(a));
  }

  /**
   * Revokes every live grant `selector` names; returns them. Each revocation is its own
   * commit, so a command stopped half-way leaves the rest live, never a half-revoked grant.
   */
  async revoke(selector: GrantSelector): Promise<GrantView[]> {
    const views = await this.list(selector);
    for (const view of views) await this.deps.grants.revokeFamily(view.id);
    return views;
  }

  /** Revokes grant `id` if it is live and `userId`'s; false when it is not theirs (or gone). */
  async revokeOwn(userId: string, id: string): Promise<boolean> {
    const [view] = await this.list({ grant: id });
    if (!view || view.userId !== userId) return false;
    await this.deps.grants.revokeFamily(id);
    return true;
  }

  /**
   * Gives grants opened before the indexes existed their facts and index entries, from their
   * live refresh token, once per storage (a marker records that it ran). Returns how many.
   */
  async indexLegacyGrants(): Promise<number> {
    const { store, clock } = this.deps;
    if (await store.get(KEYS.grantIndexBuilt)) return 0;
    let indexed = 0;
    for (const entry of await store.list<RefreshRecord>(KEYS.refreshTokens)) {
      const token = entry.value;
      if (!token || token.expiresAt <= clock.now()) continue;
      for (let attempt = 0; attempt < 4; attempt++) {
        const family = await store.getEntry<FamilyRecord>(KEYS.family(token.familyId));
        const record = family.value;
        if (!record || record.revoked || record.userId !== undefined) break;
        const writes = familyWrites(token.familyId, withFacts(record, token));
        if (await store.commitIfUnchanged([family], { writes })) {
          indexed++;
          break;
        }
      }
    }
    await store.set(KEYS.grantIndexBuilt, { at: clock.now(), indexed });
    return indexed;
  }

  async #records(selector: GrantSelector): Promise<[string, FamilyRecord][]> {
    const { store } = this.deps;
    if ("grant" in selector) {
      const record = await store.get<FamilyRecord>(KEYS.family(selector.grant));
      return record ? [[selector.grant, record]] : [];
    }
    if ("all" in selector) {
      return (await store.list<FamilyRecord>(KEYS.families)).flatMap((entry) => {
        const id = entry.key.at(-1);
        return typeof id === "string" && entry.value ? [[id, entry.value]] : [];
      });
    }
    const prefix: StoreKey = "user" in selector
      ? KEYS.grantsOfUser(selector.user)
      : "email" in selector
      ? KEYS.grantsOfEmail(selector.email.toLowerCase())
      : KEYS.grantsOfClient(selector.client);
    const ids = (await store.list(prefix)).map((entry) => entry.key.at(-1))
      .filter((id): id is string => typeof id === "string");
    const records: [string, FamilyRecord][] = [];
    for (let i = 0; i < ids.length; i += READ_BATCH) {
      const batch = ids.slice(i, i + READ_BATCH);
      const read = await Promise.all(batch.map((id) => store.get<FamilyRecord>(KEYS.family(id))));
      read.forEach((record, j) => {
        if (record && indexedUnder(record, selector)) records.push([batch[j], record]);
      });
    }
    return records;
  }

  async #clientName(clientId: string): Promise<string | undefined> {
    const id = parseClientId(clientId);
    if (!id) return undefined;
    try {
      return (await this.deps.clients.find(id))?.clientName;
    } catch {
      // A metadata document that cannot be fetched now: the list shows the client's id.
      return undefined;
    }
  }
}

/** An index entry outliving a change of its grant's facts never lists the grant under another. */
function indexedUnder(record: FamilyRecord, selector: GrantSelector): boolean {
  if ("user" in selector) return record.userId === selector.user;
  if ("email" in selector) return record.email?.toLowerCase() === selector.email.toLowerCase();
  if ("client" in selector) return record.clientId === selector.client;
  return true;
}

function viewOf(id: string, record: FamilyRecord, clientName: string | undefined): GrantView {
  return {
    id,
    userId: record.userId,
    email: record.email,
    clientId: record.clientId,
    clientName,
    audience: record.audience ?? [],
    grantedAt: record.grantedAt,
    lastUsedAt: record.lastUsedAt,
    expiresAt: record.expiresAt,
    issuedVia: record.issuedVia ?? "authorization_code",
  };
}

function recency(view: GrantView): number {
  return view.lastUsedAt ?? view.grantedAt ?? 0;
}

/** The server names of a grant's audience (service URIs under `issuer`). */
export function serverNames(audience: string[], issuer: string): string[] {
  const base = `${issuer.replace(/\/$/, "")}/`;
  return audience.map((uri) => uri.startsWith(base) ? uri.slice(base.length) : uri);
}
