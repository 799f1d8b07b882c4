/**
 * What is kept of a grant (a token family) besides its tokens: who granted which client which
 * services, when, when it was last used, whether it is revoked; the index entries that list it
 * by person, e-mail address and client; and the records a revocation leaves for every replica.
 *
 * Families opened before these facts were kept hold only `revoked`, `refreshHash` and
 * `expiresAt` (they exist in people's KV files): every reader copes with the facts missing, and
 * the family's next token (or `indexLegacyGrants`) fills them in from its refresh token.
 */
import type { Identity } from "../core/identity.ts";
import { KEYS } from "../store/keys.ts";
import type { StoreKey, StoreWrite } from "../store/store.ts";
import { SKEW_SECONDS } from "./access_tokens.ts";

export interface FamilyRecord {
  revoked: boolean;
  /** Hash of the family's live refresh token. */
  refreshHash?: string;
  expiresAt: number;
  /** The person: the identity provider's subject (the access token's `sub`). */
  userId?: string;
  email?: string;
  clientId?: string;
  /** Service URIs. */
  audience?: string[];
  scope?: string;
  /**
   * The person's groups as the identity provider last named them (at the sign-in that began the
   * grant, or read again at a token request once older than `oauth.groupsMaxAge`; bounded,
   * idp/groups.ts): every request is judged by these, not by the token's `groups` claim, which
   * holds only those the configuration named when it was issued. Unknown for families opened
   * before; their requests fall back to the token's claim.
   */
  groups?: string[];
  /** When the authorization code was redeemed; unknown for families opened before. */
  grantedAt?: number;
  /**
   * When the client last got tokens from this grant (code redemption or refresh). Not moved by
   * MCP calls: a client in use refreshes at least once per access-token lifetime, so this is
   * never staler than `oauth.accessTokenTtl`, and a call costs no storage write.
   */
  lastUsedAt?: number;
  revokedAt?: number;
  /**
   * How the grant was issued when not through /authorize and its code: "id-jag", an ID-JAG
   * presented with the jwt-bearer grant (no browser, no consent page, no refresh token).
   */
  issuedVia?: "id-jag";
}

/** Who granted which client what: the parts of a code or refresh record a family keeps. */
export interface GrantFacts {
  clientId: string;
  identity: Identity;
  audience: string[];
  scope: string;
}

/**
 * `record` with the facts it lacks taken from `facts` (a legacy family learns them here), and
 * the person's groups as `facts` last read them (at sign-in, or from the identity provider again
 * when they grew older than `oauth.groupsMaxAge`; a family opened before groups were kept
 * learns them here too).
 */
export function withFacts(record: FamilyRecord, facts: GrantFacts): FamilyRecord {
  const groups = facts.identity.groups;
  if (groups !== undefined) record = { ...record, groups: [...groups] };
  if (record.userId !== undefined) return record;
  return {
    ...record,
    userId: facts.identity.subject,
    ...(facts.identity.email !== undefined && { email: facts.identity.email }),
    clientId: facts.clientId,
    audience: facts.audience,
    scope: facts.scope,
  };
}

/** An index entry holds only its lifetime: the grant's id is the key's last part. */
interface IndexEntry {
  expiresAt: number;
}

/** The index keys of a family: by person, by lower-cased address, by client (those it knows). */
export function indexKeys(familyId: string, record: FamilyRecord): StoreKey[] {
  const keys: StoreKey[] = [];
  if (record.userId !== undefined) keys.push(KEYS.grantOfUser(record.userId, familyId));
  if (record.email !== undefined) {
    keys.push(KEYS.grantOfEmail(record.email.toLowerCase(), familyId));
  }
  if (record.clientId !== undefined) keys.push(KEYS.grantOfClient(record.clientId, familyId));
  return keys;
}

/**
 * The writes that store a live family: its record and its index entries, all with its lifetime
 * (rewritten whenever the family's lifetime moves, so the entries never lapse before it).
 */
export function familyWrites(familyId: string, record: FamilyRecord): StoreWrite[] {
  return [
    { key: KEYS.family(familyId), value: record, expiresAt: record.expiresAt },
    ...indexKeys(familyId, record).map((key) => ({
      key,
      value: { expiresAt: record.expiresAt } satisfies IndexEntry,
      expiresAt: record.expiresAt,
    })),
  ];
}

/** A revocation as every replica reads it (revocations.ts). */
export interface RevocationRecord {
  /** When the last access token the grant could have issued stops verifying anyway. */
  expiresAt: number;
}

/** How long a revocation must be remembered: as long as a token issued now could verify. */
export function revocationLifetime(now: number, accessMs: number): number {
  return now + accessMs + SKEW_SECONDS * 1000;
}

/**
 * The revocation's record, and the epoch every revocation rewrites: replicas poll the epoch's
 * version (one small read) and read the revocations again only when it moved.
 */
export function revocationWrites(familyId: string, until: number, now: number): StoreWrite[] {
  return [
    {
      key: KEYS.revocation(familyId),
      value: { expiresAt: until } satisfies RevocationRecord,
      expiresAt: until,
    },
    { key: KEYS.revocationEpoch, value: { at: now } },
  ];
}

/**
 * Whether a family can still be used: not revoked, not expired, and, for one that never had a
 * refresh token, its one access token not yet past its lifetime.
 */
export function isLive(record: FamilyRecord, now: number, accessMs: number): boolean {
  if (record.revoked || record.expiresAt <= now) return false;
  if (record.refreshHash !== undefined || record.grantedAt === undefined) return true;
  return (record.lastUsedAt ?? record.grantedAt) + accessMs + SKEW_SECONDS * 1000 > now;
}
