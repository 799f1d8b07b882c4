/**
 * Access tokens: RFC 9068 JWTs (`typ: at+jwt`), HS256 with the JWT-signing key derived from the
 * master secret. The audience lists the service URIs the token opens, nothing more; `groups`
 * lists those of the person's groups that the configuration names (see TokenDeps.namedGroups).
 */
import type { Clock } from "../core/clock.ts";
import { type JwtClaims, JwtError, signJwt, verifyJwt } from "../crypto/jwt.ts";
import { randomBase64Url } from "../crypto/random.ts";

export const ACCESS_TOKEN_TYPE = "at+jwt";
/** Leeway for clocks that disagree a little, on every check of a token's lifetime. */
export const SKEW_SECONDS = 30;

export interface AccessTokenGrant {
  subject: string;
  email?: string;
  clientId: string;
  audience: string[];
  scope: string;
  /** The grant (family) this token came from, so revoking the grant stops it too. */
  familyId: string;
  /** The person's groups that access rules may ask about; omitted from the token when empty. */
  groups?: readonly string[];
}

export interface AccessTokenClaims extends JwtClaims {
  sub: string;
  aud: string[];
  client_id: string;
  scope: string;
  email?: string;
  fam: string;
  groups?: string[];
}

export class AccessTokens {
  constructor(
    private readonly options: {
      issuer: string;
      /** The signing key first, then keys of previous secrets (verification only). */
      keys: CryptoKey[];
      ttlMs: number;
      clock: Clock;
    },
  ) {}

  get ttlSeconds(): number {
    return Math.floor(this.options.ttlMs / 1000);
  }

  async issue(grant: AccessTokenGrant): Promise<string> {
    const now = Math.floor(this.options.clock.now() / 1000);
    const claims: AccessTokenClaims = {
      iss: this.options.issuer,
      sub: grant.subject,
      aud: grant.audience,
      iat: now,
      exp: now + this.ttlSeconds,
      jti: randomBase64Url(16),
      client_id: grant.clientId,
      scope: grant.scope,
      ...(grant.email !== undefined && { email: grant.email }),
      fam: grant.familyId,
      ...(grant.groups?.length && { groups: [...grant.groups] }),
    };
    return await signJwt(this.options.keys[0], ACCESS_TOKEN_TYPE, claims);
  }

  /** The claims of a valid token for `audience`; throws `JwtError` otherwise. */
  async verify(token: string, audience: string): Promise<AccessTokenClaims> {
    const claims = await verifyJwt(token, {
      keys: this.options.keys,
      typ: ACCESS_TOKEN_TYPE,
      issuer: this.options.issuer,
      audience,
      now: Math.floor(this.options.clock.now() / 1000),
      skewSeconds: SKEW_SECONDS,
    });
    if (typeof claims.sub !== "string" || typeof claims.fam !== "string") {
      throw new JwtError("malformed", "the token lacks its subject or grant");
    }
    const groups = claims.groups;
    if (
      groups !== undefined &&
      !(Array.isArray(groups) && groups.every((group) => typeof group === "string"))
    ) {
      throw new JwtError("malformed", "the token's groups are not a list of names");
    }
    return claims as AccessTokenClaims;
  }
}
