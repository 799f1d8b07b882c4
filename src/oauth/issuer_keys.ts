/**
 * The signing keys of trusted issuers (their JWKS), cached per issuer. An assertion naming a
 * `kid` the cache lacks makes one new fetch of that issuer's keys, at most once per
 * `REFETCH_INTERVAL_MS`: a flood of made-up `kid`s costs the issuer one request per interval,
 * and a rotation at the issuer (a new `kid`) is picked up at its first use. A key the issuer
 * withdrew is dropped at the next fetch, which any unknown `kid` or the cache's age brings.
 *
 * The outside world is the injected `JwksFetcher` (app.ts gives it the bounded fetch of
 * `idp/issuer_jwks.ts`); this module only decides when to ask it.
 */
import type { Clock } from "../core/clock.ts";
import {
  importPublicJwk,
  keyFits,
  type PublicJwk,
  type PublicKeyAlgorithm,
} from "../crypto/jws.ts";

/** The issuer's JWKS document (RFC 7517 §5), as fetched; validated here. */
export type JwksFetcher = (issuer: string) => Promise<unknown>;

/** At most one fetch of an issuer's keys per this interval, however many unknown `kid`s come. */
export const REFETCH_INTERVAL_MS = 30_000;
/** Keys are fetched again after this long even when every `kid` is known (withdrawals). */
export const KEYS_MAX_AGE_MS = 5 * 60_000;
/** Keys kept per issuer: a document listing more is cut to these. */
const MAX_KEYS = 20;
/**
 * Issuers (or client `jwks_uri`s) remembered at once: trusted issuers are few, but clients'
 * metadata documents may name any number of `jwks_uri`s, so the oldest is forgotten first.
 */
const MAX_ISSUERS = 1_000;

interface IssuerEntry {
  keys: PublicJwk[];
  /** When the last fetch was started, successful or not. */
  attemptedAt: number;
  /** When the keys were last fetched successfully. */
  fetchedAt: number;
  inFlight?: Promise<void>;
  lastError?: string;
}

/** A key to verify with, or why there is none (a sentence for `error_description`). */
export type KeyLookup = { ok: true; keys: CryptoKey[] } | { ok: false; reason: string };

export class IssuerKeys {
  readonly #issuers = new Map<string, IssuerEntry>();
  /** How many times the fetcher was asked, for tests and the bench. */
  fetches = 0;

  constructor(private readonly fetchJwks: JwksFetcher, private readonly clock: Clock) {}

  /**
   * The keys of `issuer` that may have signed with `alg` under `kid` (every fitting key when
   * the header names none). Fetches when the keys are old or `kid` is unknown, within the
   * interval's limit.
   */
  async keysFor(issuer: string, kid: string | undefined, alg: PublicKeyAlgorithm): Promise<
    KeyLookup
  > {
    let entry = this.#issuers.get(issuer);
    const now = this.clock.now();
    if (!entry || now - entry.fetchedAt >= KEYS_MAX_AGE_MS) {
      entry = await this.#refresh(issuer);
    }
    let found = candidates(entry.keys, kid, alg);
    if (found.length === 0 && kid !== undefined) {
      entry = await this.#refresh(issuer);
      found = candidates(entry.keys, kid, alg);
    }
    if (found.length === 0) {
      if (entry.keys.length === 0) {
        return {
          ok: false,
          reason: `the keys of issuer ${issuer} could not be fetched${
            entry.lastError ? ` (${entry.lastError})` : ""
          }; try again later`,
        };
      }
      return {
        ok: false,
        reason: kid === undefined
          ? `issuer ${issuer} publishes no ${alg} key`
          : `issuer ${issuer} publishes no current ${alg} key with kid ${
            kid.slice(0, 100)
          } (withdrawn, or never its key)`,
      };
    }
    const keys = (await Promise.all(found.map((jwk) => importPublicJwk(jwk, alg))))
      .filter((key): key is CryptoKey => key !== undefined);
    if (keys.length === 0) {
      return { ok: false, reason: `issuer ${issuer}'s key for ${alg} is not a usable key` };
    }
    return { ok: true, keys };
  }

  /**
   * Fetches the issuer's keys unless a fetch started less than REFETCH_INTERVAL_MS ago;
   * concurrent callers share one fetch. A failed fetch keeps the keys known before.
   */
  async #refresh(issuer: string): Promise<IssuerEntry> {
    let entry = this.#issuers.get(issuer);
    if (!entry) {
      entry = { keys: [], attemptedAt: -Infinity, fetchedAt: -Infinity };
      if (this.#issuers.size >= MAX_ISSUERS) {
        this.#issuers.delete(this.#issuers.keys().next().value!);
      }
      this.#issuers.set(issuer, entry);
    }
    if (entry.inFlight) {
      await entry.inFlight;
      return entry;
    }
    const now = this.clock.now();
    if (now - entry.attemptedAt < REFETCH_INTERVAL_MS) return entry;
    entry.attemptedAt = now;
    const target = entry;
    target.inFlight = (async () => {
      this.fetches++;
      try {
        target.keys = parseJwks(await this.fetchJwks(issuer));
        target.fetchedAt = this.clock.now();
        target.lastError = undefined;
      } catch (error) {
        target.lastError = (error as Error).message ?? String(error);
      } finally {
        target.inFlight = undefined;
      }
    })();
    await target.inFlight;
    return target;
  }
}

function candidates(
  keys: PublicJwk[],
  kid: string | undefined,
  alg: PublicKeyAlgorithm,
): PublicJwk[] {
  return keys.filter((jwk) => (kid === undefined || jwk.kid === kid) && keyFits(jwk, alg));
}

/** The keys of a JWKS document; throws when it is not one. */
export function parseJwks(body: unknown): PublicJwk[] {
  const keys = (body as { keys?: unknown } | undefined)?.keys;
  if (!Array.isArray(keys)) throw new Error("the JWKS document has no keys array");
  return keys
    .filter((key): key is PublicJwk => !!key && typeof key === "object" && !Array.isArray(key))
    .slice(0, MAX_KEYS);
}
