/**
 * Checks an access token presented to a service: signature, type, issuer, expiry, that its
 * audience holds this service's URI, and that its grant has not been revoked. Revocation is
 * asked of this replica's in-memory set (revocations.ts), refreshed from storage every few
 * seconds, so a revoked grant stops working on every replica within 10 s and no request waits
 * for storage. The first time this replica sees a grant it reads the grant's record once: a
 * token of a grant already revoked, or one storage no longer knows, is refused at once; and the
 * person's groups the grant keeps are kept with it, so every request is judged by all of them
 * (a reload's policy may name a group no configuration named when the token was issued). A
 * token issued after that read (a refresh, which may have read the groups again from the
 * identity provider) has the record read again: one read per grant per newer access token.
 */
import type { Clock } from "../core/clock.ts";
import type { ServerName } from "../core/ids.ts";
import { JwtError } from "../crypto/jwt.ts";
import { type AccessTokenClaims, type AccessTokens, SKEW_SECONDS } from "./access_tokens.ts";
import type { GrantStore } from "./grants.ts";
import type { Revocations } from "./revocations.ts";
import { serviceUri } from "./services.ts";

/** Grants this replica has read once and found live; past this many it reads them again. */
const KNOWN_GRANTS_SIZE = 10_000;
/** Tokens whose signature was already checked, so a busy client costs one HMAC, not one per call. */
const VERIFIED_CACHE_SIZE = 10_000;

export type TokenCheck =
  /** `groups`: the grant's, when its record keeps them; else the token's claim is all there is. */
  | { ok: true; claims: AccessTokenClaims; groups?: readonly string[] }
  | { ok: false; description: string };

const DESCRIPTIONS: Record<JwtError["code"], string> = {
  malformed: "the access token is malformed",
  unsupported_algorithm: "the access token's algorithm is not accepted",
  wrong_type: "the access token has the wrong type (expected at+jwt)",
  bad_signature: "the access token's signature is invalid",
  wrong_issuer: "the access token was issued by another authorization server",
  wrong_audience: "",
  expired: "the access token has expired; refresh it or sign in again",
  not_yet_valid: "the access token is not valid yet; check the clocks",
};

/** What a token of a revoked grant is refused with (troubleshooting.md quotes it). */
export const REVOKED_GRANT = "this grant was revoked: sign in again through your MCP client";

export class TokenVerifier {
  /**
   * Grants read and found live: the groups their record keeps (if it does), and the issue time
   * (`iat`) of the newest token the record was read for.
   */
  readonly #known = new Map<string, { groups?: readonly string[]; iat: number }>();
  /** Per service: tokens already verified for it, and their claims. */
  readonly #verified = new Map<ServerName, Map<string, AccessTokenClaims>>();
  #verifiedCount = 0;

  constructor(
    private readonly options: {
      issuer: string;
      accessTokens: AccessTokens;
      grants: GrantStore;
      revocations: Revocations;
      clock: Clock;
    },
  ) {}

  async verify(token: string, server: ServerName): Promise<TokenCheck> {
    let verified = this.#verified.get(server);
    const cached = verified?.get(token);
    if (cached) {
      if (cached.exp! + SKEW_SECONDS > this.options.clock.now() / 1000) {
        return await this.#unlessRevoked(cached);
      }
      verified!.delete(token);
      this.#verifiedCount--;
    }
    const audience = serviceUri(this.options.issuer, server);
    let claims: AccessTokenClaims;
    try {
      claims = await this.options.accessTokens.verify(token, audience);
    } catch (error) {
      if (!(error instanceof JwtError)) throw error;
      return {
        ok: false,
        description: error.code === "wrong_audience"
          ? `the access token is not valid for ${audience}; obtain a token for this service`
          : DESCRIPTIONS[error.code],
      };
    }
    if (this.#verifiedCount >= VERIFIED_CACHE_SIZE) {
      this.#verified.clear();
      this.#verifiedCount = 0;
    }
    if (!verified) this.#verified.set(server, verified = new Map());
    verified.set(token, claims);
    this.#verifiedCount++;
    return await this.#unlessRevoked(claims);
  }

  /** After any cache hit too: a token verified before its grant was revoked stops here. */
  async #unlessRevoked(claims: AccessTokenClaims): Promise<TokenCheck> {
    const { revocations, grants } = this.options;
    if (revocations.has(claims.fam)) return { ok: false, description: REVOKED_GRANT };
    const known = this.#known.get(claims.fam);
    if (known && claims.iat! <= known.iat) return { ok: true, claims, groups: known.groups };
    const family = await grants.liveFamily(claims.fam);
    if (!family) {
      // Kept as long as the token could verify, so it is refused without a read from now on.
      revocations.noteRevoked(claims.fam, (claims.exp! + SKEW_SECONDS) * 1000);
      return { ok: false, description: REVOKED_GRANT };
    }
    if (this.#known.size >= KNOWN_GRANTS_SIZE) this.#known.clear();
    this.#known.set(claims.fam, { groups: family.groups, iat: claims.iat! });
    return { ok: true, claims, groups: family.groups };
  }
}
