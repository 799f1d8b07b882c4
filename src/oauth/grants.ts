/**
 * The one-time items of the authorization server and the grants they belong to. A grant
 * (a "family") is everything issued from one authorization code. Codes and refresh tokens are
 * stored by hash and consumed atomically; redeeming one leaves a marker, so a second use is
 * recognised as a replay and revokes the whole family (RFC 9700 §4.14, OAuth 2.1 §4.3.1).
 */
import type { Clock } from "../core/clock.ts";
import type { Identity } from "../core/identity.ts";
import { sha256Base64Url } from "../crypto/base64url.ts";
import { randomBase64Url } from "../crypto/random.ts";
import { KEYS } from "../store/keys.ts";
import type { Store, StoreKey } from "../store/store.ts";
import {
  type FamilyRecord,
  familyWrites,
  indexKeys,
  revocationLifetime,
  revocationWrites,
  withFacts,
} from "./grant_records.ts";

/** What a person granted a client: who, for which services, with which scope. */
export interface GrantContext {
  clientId: string;
  identity: Identity;
  /** Service URIs. */
  audience: string[];
  scope: string;
}

export interface CodeRecord extends GrantContext {
  redirectUri: string;
  codeChallenge: string;
  expiresAt: number;
}

export interface RefreshRecord extends GrantContext {
  familyId: string;
  expiresAt: number;
}

interface UsedMarker {
  familyId: string;
  expiresAt: number;
}

/** The outcome of a rotation: the new refresh token, or why there is none. */
export type Rotation =
  | { ok: true; token: string }
  | { ok: false; reason: "replayed" | "revoked" };

/**
 * Commits conditioned on what was read fail only when a record moved in between; each retry
 * reads again and decides again, so this bounds only a pathological storm of writers.
 */
const COMMIT_ATTEMPTS = 8;

export type Redemption<T> =
  | { ok: true; record: T; familyId: string }
  | { ok: false; reason: "unknown" | "expired" | "replayed" };

export class GrantStore {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly lifetimes: { codeMs: number; refreshMs: number; accessMs: number },
    /** Told of every revocation made here, so this replica acts on it at once. */
    private readonly onRevoked?: (familyId: string, until: number) => void,
  ) {}

  /** How long an access token lives; a family without a refresh token lives that long. */
  get accessMs(): number {
    return this.lifetimes.accessMs;
  }

  async issueCode(context: Omit<CodeRecord, "expiresAt">): Promise<string> {
    const code = randomBase64Url(32);
    const record: CodeRecord = { ...context, expiresAt: this.clock.now() + this.lifetimes.codeMs };
    await this.store.set(KEYS.code(await sha256Base64Url(code)), record, record.expiresAt);
    return code;
  }

  /** Reads a live code without using it up; undefined when unknown, used or expired. */
  async peekCode(code: string): Promise<CodeRecord | undefined> {
    const record = await this.store.get<CodeRecord>(KEYS.code(await sha256Base64Url(code)));
    return record && record.expiresAt > this.clock.now() ? record : undefined;
  }

  /**
   * Consumes a code and opens its family (with who granted what, and its index entries),
   * atomically. A code seen a second time revokes the family the first use opened. An expired
   * code is used up too, and its family is born revoked: nothing is ever issued from it.
   */
  async redeemCode(code: string): Promise<Redemption<CodeRecord>> {
    const hash = await sha256Base64Url(code);
    const familyId = randomBase64Url(16);
    for (let attempt = 0; attempt < COMMIT_ATTEMPTS; attempt++) {
      const entry = await this.store.getEntry<CodeRecord>(KEYS.code(hash));
      const record = entry.value;
      if (record === undefined) break;
      const now = this.clock.now();
      const familyLife = now + Math.max(this.lifetimes.refreshMs, this.lifetimes.accessMs);
      const expired = record.expiresAt <= now;
      const family = withFacts({ revoked: expired, expiresAt: familyLife, grantedAt: now }, record);
      const committed = await this.store.commitIfUnchanged([entry], {
        deletes: [KEYS.code(hash)],
        writes: [
          {
            key: KEYS.usedCode(hash),
            value: { familyId, expiresAt: familyLife } satisfies UsedMarker,
            expiresAt: familyLife,
          },
          ...(expired
            ? [{ key: KEYS.family(familyId), value: family, expiresAt: familyLife }]
            : familyWrites(familyId, { ...family, lastUsedAt: now })),
        ],
      });
      if (!committed) continue;
      if (expired) return { ok: false, reason: "expired" };
      return { ok: true, record, familyId };
    }
    return await this.#replayed(KEYS.usedCode(hash));
  }

  /**
   * Opens a grant that no code began (an ID-JAG's, `jwt_bearer.ts`) and records `once` (the
   * assertion's `jti`) in the same atomic step, written only while `once` is absent: the same
   * assertion opens at most one grant, whichever replica sees it. Such a grant has no refresh
   * token and lives as long as its one access token. Undefined when `once` was recorded before.
   */
  async openOnce(
    context: GrantContext,
    via: "id-jag",
    once: { key: StoreKey; expiresAt: number },
  ): Promise<string | undefined> {
    const familyId = randomBase64Url(16);
    const now = this.clock.now();
    const family = withFacts({
      revoked: false,
      expiresAt: revocationLifetime(now, this.lifetimes.accessMs),
      grantedAt: now,
      lastUsedAt: now,
      issuedVia: via,
    }, context);
    const committed = await this.store.commitIfUnchanged([{ key: once.key, version: null }], {
      writes: [
        { key: once.key, value: { expiresAt: once.expiresAt }, expiresAt: once.expiresAt },
        ...familyWrites(familyId, family),
      ],
    });
    return committed ? familyId : undefined;
  }

  /**
   * A new refresh token in `familyId`, recorded as the family's live one, or undefined when the
   * family is revoked (a replay of its code got there first). Written only if the family record
   * is still the one read, so a revocation in between is never overwritten with a live family.
   */
  async issueRefresh(familyId: string, context: GrantContext): Promise<string | undefined> {
    const token = randomBase64Url(32);
    const hash = await sha256Base64Url(token);
    const record = this.#refreshRecord(familyId, context);
    for (let attempt = 0; attempt < COMMIT_ATTEMPTS; attempt++) {
      const family = await this.store.getEntry<FamilyRecord>(KEYS.family(familyId));
      if (!family.value || family.value.revoked) return undefined;
      const until = Math.max(record.expiresAt, family.value.expiresAt);
      const committed = await this.store.commitIfUnchanged([family], {
        writes: [
          { key: KEYS.refresh(hash), value: record, expiresAt: record.expiresAt },
          ...familyWrites(familyId, {
            ...withFacts(family.value, context),
            refreshHash: hash,
            expiresAt: until,
          }),
        ],
      });
      if (committed) return token;
    }
    throw new Error(`storage: the grant ${familyId} kept changing while a token was issued`);
  }

  /** A live refresh token's record, without using it or judging a used one (RFC 7009). */
  async refreshRecord(token: string): Promise<RefreshRecord | undefined> {
    const record = await this.store.get<RefreshRecord>(KEYS.refresh(await sha256Base64Url(token)));
    return record && record.expiresAt > this.clock.now() ? record : undefined;
  }

  /** Reads a refresh token without using it, for the checks that precede rotation. */
  async peekRefresh(token: string): Promise<Redemption<RefreshRecord>> {
    const hash = await sha256Base64Url(token);
    const record = await this.store.get<RefreshRecord>(KEYS.refresh(hash));
    if (!record) return await this.#replayed(KEYS.usedRefresh(hash));
    if (record.expiresAt <= this.clock.now()) return { ok: false, reason: "expired" };
    if (await this.isFamilyRevoked(record.familyId)) return { ok: false, reason: "replayed" };
    return { ok: true, record, familyId: record.familyId };
  }

  /**
   * Rotates a refresh token whose record `peekRefresh` returned: the old one is consumed and
   * the new one written in one atomic step, committed only if neither the old token nor the
   * family record changed since they were read. So a rotation racing a revocation either lands
   * first (and is revoked with the rest) or is refused; it never writes the family back as live.
   * "replayed" when someone else used the old token first, which revokes the family.
   */
  async rotateRefresh(token: string, old: RefreshRecord): Promise<Rotation> {
    const oldHash = await sha256Base64Url(token);
    const next = randomBase64Url(32);
    const nextHash = await sha256Base64Url(next);
    const record = this.#refreshRecord(old.familyId, old);
    for (let attempt = 0; attempt < COMMIT_ATTEMPTS; attempt++) {
      const [current, family] = await Promise.all([
        this.store.getEntry<RefreshRecord>(KEYS.refresh(oldHash)),
        this.store.getEntry<FamilyRecord>(KEYS.family(old.familyId)),
      ]);
      if (current.value === undefined) {
        await this.revokeFamily(old.familyId);
        return { ok: false, reason: "replayed" };
      }
      if (!family.value || family.value.revoked) return { ok: false, reason: "revoked" };
      const committed = await this.store.commitIfUnchanged([current, family], {
        deletes: [KEYS.refresh(oldHash)],
        writes: [
          { key: KEYS.refresh(nextHash), value: record, expiresAt: record.expiresAt },
          {
            key: KEYS.usedRefresh(oldHash),
            value: { familyId: old.familyId, expiresAt: record.expiresAt } satisfies UsedMarker,
            expiresAt: record.expiresAt,
          },
          ...familyWrites(old.familyId, {
            ...withFacts(family.value, old),
            refreshHash: nextHash,
            expiresAt: record.expiresAt,
            lastUsedAt: this.clock.now(),
          }),
        ],
      });
      if (committed) return { ok: true, token: next };
    }
    throw new Error(`storage: the grant ${old.familyId} kept changing while its token rotated`);
  }

  /**
   * Ends a grant: its refresh token and access tokens stop working, on every replica within
   * the revocation poll (revocations.ts), here at once. The refresh record stays until it
   * expires, so a later attempt to use it is recognised and named as revoked. The family keeps
   * its facts (for the audit of who had what) and leaves the indexes of live grants.
   */
  async revokeFamily(familyId: string): Promise<void> {
    const now = this.clock.now();
    const until = revocationLifetime(now, this.lifetimes.accessMs);
    const write = (family: FamilyRecord | undefined) => {
      const expiresAt = Math.max(family?.expiresAt ?? 0, until);
      const revoked: FamilyRecord = {
        ...family,
        revoked: true,
        revokedAt: family?.revokedAt ?? now,
        expiresAt,
      };
      return {
        writes: [
          { key: KEYS.family(familyId), value: revoked, expiresAt },
          ...revocationWrites(familyId, until, now),
        ],
        deletes: family ? indexKeys(familyId, family) : [],
      };
    };
    let committed = false;
    for (let attempt = 0; attempt < COMMIT_ATTEMPTS && !committed; attempt++) {
      const family = await this.store.getEntry<FamilyRecord>(KEYS.family(familyId));
      committed = await this.store.commitIfUnchanged([family], write(family.value));
    }
    // A revocation must land: past a storm of writers, without the family's facts.
    if (!committed) await this.store.commitIfUnchanged([], write(undefined));
    this.onRevoked?.(familyId, until);
  }

  async isFamilyRevoked(familyId: string): Promise<boolean> {
    return (await this.liveFamily(familyId)) === undefined;
  }

  /** The family's record while it is not revoked; undefined when revoked or unknown. */
  async liveFamily(familyId: string): Promise<FamilyRecord | undefined> {
    const family = await this.store.get<FamilyRecord>(KEYS.family(familyId));
    return family === undefined || family.revoked ? undefined : family;
  }

  #refreshRecord(familyId: string, context: GrantContext): RefreshRecord {
    return {
      clientId: context.clientId,
      identity: context.identity,
      audience: context.audience,
      scope: context.scope,
      familyId,
      expiresAt: this.clock.now() + this.lifetimes.refreshMs,
    };
  }

  async #replayed<T>(markerKey: readonly string[]): Promise<Redemption<T>> {
    const marker = await this.store.get<UsedMarker>(markerKey);
    if (!marker || marker.expiresAt <= this.clock.now()) return { ok: false, reason: "unknown" };
    await this.revokeFamily(marker.familyId);
    return { ok: false, reason: "replayed" };
  }
}
