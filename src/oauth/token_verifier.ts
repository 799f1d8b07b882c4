/**
 * Checks an access token presented to a service: signature, type, issuer, expiry, that its
 * audience holds this service's URI, and that its grant has not been revoked. Revocation is
 * looked up in the store and remembered briefly, so a revoked grant stops working on every
 * replica within `REVOCATION_CACHE_MS` without a store read per request.
 */
import type { Clock } from "../core/clock.ts";
import type { ServerName } from "../core/ids.ts";
import { JwtError } from "../crypto/jwt.ts";
import { type AccessTokenClaims, type AccessTokens, SKEW_SECONDS } from "./access_tokens.ts";
import type { GrantStore } from "./grants.ts";
import { serviceUri } from "./services.ts";

const REVOCATION_CACHE_MS = 5_000;
const REVOCATION_CACHE_SIZE = 10_000;
/** Tokens whose signature was already checked, so a busy client costs one HMAC, not one per call. */
const VERIFIED_CACHE_SIZE = 10_000;

export type TokenCheck =
  | { ok: true; claims: AccessTokenClaims }
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

export class TokenVerifier {
  readonly #revocations = new Map<string, { revoked: boolean; at: number }>();
  /** Per service: tokens already verified for it, and their claims. */
  readonly #verified = new Map<ServerName, Map<string, AccessTokenClaims>>();
  #verifiedCount = 0;

  constructor(
    private readonly options: {
      issuer: string;
      accessTokens: AccessTokens;
      grants: GrantStore;
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

  async #unlessRevoked(claims: AccessTokenClaims): Promise<TokenCheck> {
    if (await this.#isRevoked(claims.fam)) {
      return { ok: false, description: "the access token's grant has been revoked" };
    }
    return { ok: true, claims };
  }

  async #isRevoked(familyId: string): Promise<boolean> {
    const now = this.options.clock.now();
    const cached = this.#revocations.get(familyId);
    if (cached && now - cached.at < REVOCATION_CACHE_MS) return cached.revoked;
    const revoked = await this.options.grants.isFamilyRevoked(familyId);
    if (this.#revocations.size >= REVOCATION_CACHE_SIZE) this.#revocations.clear();
    this.#revocations.set(familyId, { revoked, at: now });
    return revoked;
  }
}
