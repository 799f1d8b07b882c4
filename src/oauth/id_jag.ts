/**
 * The Identity Assertion JWT Authorization Grant (ID-JAG, draft-ietf-oauth-identity-assertion-
 * authz-grant) as Gatehouse accepts it at /token: `ID_JAG_CHECKS` is every check, named and in
 * the order they run; the first that fails names itself in the refusal. Nothing here uses
 * anything up: recording the `jti` (so a replay is refused on every replica) is the grant's
 * last step, in `jwt_bearer.ts`, together with the grant it opens.
 */
import type { ClientId } from "../core/ids.ts";
import {
  type DecodedJws,
  decodeJws,
  isPublicKeyAlgorithm,
  namesCriticalExtensions,
  PUBLIC_KEY_ALGORITHMS,
  type PublicKeyAlgorithm,
  verifyJws,
} from "../crypto/jws.ts";
import type { IssuerKeys } from "./issuer_keys.ts";

export const ID_JAG_TYP = "oauth-id-jag+jwt";
/** Clocks may disagree this much when `exp`, `iat` and `nbf` are judged. */
export const ID_JAG_SKEW_SECONDS = 60;
/** The longest `jti` kept (an ID-JAG's or a client assertion's): it becomes a storage key. */
export const MAX_JTI_LENGTH = 256;
const MAX_SUB_LENGTH = 512;

/** What the configuration says about ID-JAGs (`oauth.idJag`). */
export interface IdJagPolicy {
  /** Gatehouse's issuer: the one audience an ID-JAG may name. */
  audience: string;
  /** Issuers whose ID-JAGs are trusted, compared as strings. */
  trustedIssuers: readonly string[];
  maxLifetimeMs: number;
}

/** The claims of an ID-JAG that passed every check. */
export interface IdJagClaims {
  iss: string;
  sub: string;
  jti: string;
  /** Seconds since the epoch. */
  exp: number;
  clientId: string;
  /** The `resource` claim, when the ID-JAG carries one. */
  resource?: string;
  /** The `scope` claim's scopes, when it carries one. */
  scopes?: string[];
  /** Every claim, for the person's e-mail address, name and groups. */
  all: Record<string, unknown>;
}

/** What one check reads and what earlier checks found. */
export interface IdJagInput {
  assertion: string;
  clientId: ClientId;
  /** Seconds since the epoch. */
  now: number;
  policy: IdJagPolicy;
  keys: IssuerKeys;
  /** Filled by the `format` check. */
  jws?: DecodedJws;
}

export interface IdJagCheck {
  name: string;
  /** Why the assertion fails this check (a sentence naming no part of it), or undefined. */
  run(input: IdJagInput): string | undefined | Promise<string | undefined>;
}

const claim = (input: IdJagInput, name: string): unknown => input.jws!.payload[name];
const isNumber = (value: unknown): value is number =>
  typeof value === "number" && Number.isFinite(value);

/** Every check, in order: format and header first, the signature before any claim is believed. */
export const ID_JAG_CHECKS: readonly IdJagCheck[] = [
  {
    name: "format",
    run(input) {
      const decoded = decodeJws(input.assertion);
      if (typeof decoded === "string") return `the assertion is not a JWT: ${decoded}`;
      input.jws = decoded;
      return undefined;
    },
  },
  {
    name: "typ",
    run: (input) =>
      input.jws!.header.typ === ID_JAG_TYP
        ? undefined
        : `the assertion's header typ must be ${ID_JAG_TYP}`,
  },
  {
    name: "alg",
    run: (input) =>
      isPublicKeyAlgorithm(input.jws!.header.alg)
        ? undefined
        : `the assertion's alg must be one of ${PUBLIC_KEY_ALGORITHMS.join(", ")}`,
  },
  {
    name: "crit",
    run: (input) =>
      namesCriticalExtensions(input.jws!.header)
        ? "the assertion's header names critical extensions (crit) this gateway does not understand"
        : undefined,
  },
  {
    name: "iss",
    run(input) {
      const iss = claim(input, "iss");
      return typeof iss === "string" && input.policy.trustedIssuers.includes(iss)
        ? undefined
        : "the assertion's issuer (iss) is not a trusted ID-JAG issuer";
    },
  },
  {
    name: "signature",
    async run(input) {
      const jws = input.jws!;
      const kid = jws.header.kid;
      if (kid !== undefined && typeof kid !== "string") {
        return "the assertion's kid is not a string";
      }
      const alg = jws.header.alg as PublicKeyAlgorithm;
      const lookup = await input.keys.keysFor(claim(input, "iss") as string, kid, alg);
      if (!lookup.ok) return `the assertion's signature cannot be checked: ${lookup.reason}`;
      for (const key of lookup.keys) {
        if (await verifyJws(jws, key, alg)) return undefined;
      }
      return "the assertion's signature does not verify with the issuer's key";
    },
  },
  {
    name: "aud",
    run(input) {
      const aud = claim(input, "aud");
      const single = Array.isArray(aud) && aud.length === 1 ? aud[0] : aud;
      return single === input.policy.audience
        ? undefined
        : `the assertion's audience (aud) must be exactly ${input.policy.audience}`;
    },
  },
  {
    name: "client_id",
    run: (input) =>
      claim(input, "client_id") === input.clientId
        ? undefined
        : "the assertion's client_id is not the authenticated client",
  },
  {
    name: "sub",
    run(input) {
      const sub = claim(input, "sub");
      return typeof sub === "string" && sub !== "" && sub.length <= MAX_SUB_LENGTH
        ? undefined
        : "the assertion has no subject (sub)";
    },
  },
  {
    name: "exp",
    run(input) {
      const exp = claim(input, "exp");
      if (!isNumber(exp)) return "the assertion has no expiry (exp)";
      return exp + ID_JAG_SKEW_SECONDS > input.now ? undefined : "the assertion has expired";
    },
  },
  {
    name: "iat",
    run(input) {
      const iat = claim(input, "iat");
      if (!isNumber(iat)) return "the assertion has no issue time (iat)";
      if (iat > input.now + ID_JAG_SKEW_SECONDS) return "the assertion is issued in the future";
      const nbf = claim(input, "nbf");
      if (nbf !== undefined && (!isNumber(nbf) || nbf > input.now + ID_JAG_SKEW_SECONDS)) {
        return "the assertion is not valid yet (nbf)";
      }
      return undefined;
    },
  },
  {
    name: "lifetime",
    run(input) {
      const lifetime = (claim(input, "exp") as number) - (claim(input, "iat") as number);
      const max = Math.floor(input.policy.maxLifetimeMs / 1000);
      return lifetime <= max
        ? undefined
        : `the assertion lives ${
          Math.round(lifetime)
        } s, longer than the ${max} s allowed (oauth.idJag.maxLifetime)`;
    },
  },
  {
    name: "jti",
    run(input) {
      const jti = claim(input, "jti");
      return typeof jti === "string" && jti !== "" && jti.length <= MAX_JTI_LENGTH
        ? undefined
        : "the assertion has no identifier (jti)";
    },
  },
  {
    name: "resource",
    run(input) {
      const resource = claim(input, "resource");
      return resource === undefined || typeof resource === "string"
        ? undefined
        : "the assertion's resource must be one URI";
    },
  },
  {
    name: "scope",
    run(input) {
      const scope = claim(input, "scope");
      return scope === undefined || typeof scope === "string"
        ? undefined
        : "the assertion's scope must be a space-separated string";
    },
  },
];

/**
 * Whether an assertion refused by `check` had its signature verified first, so the issuer,
 * subject and `jti` it names are the issuer's word (a step after the list, such as the
 * resource or the jti's record, comes after the signature too).
 */
export function signatureVerifiedBefore(check: string): boolean {
  const at = ID_JAG_CHECKS.findIndex((c) => c.name === check);
  return at < 0 || at > ID_JAG_CHECKS.findIndex((c) => c.name === "signature");
}

/** Runs `ID_JAG_CHECKS` in order: the claims, or the first failed check and why. */
export async function checkIdJag(
  input: IdJagInput,
): Promise<{ ok: true; claims: IdJagClaims } | { ok: false; check: string; reason: string }> {
  for (const check of ID_JAG_CHECKS) {
    const reason = await check.run(input);
    if (reason !== undefined) return { ok: false, check: check.name, reason };
  }
  const payload = input.jws!.payload;
  const scope = payload.scope as string | undefined;
  return {
    ok: true,
    claims: {
      iss: payload.iss as string,
      sub: payload.sub as string,
      jti: payload.jti as string,
      exp: payload.exp as number,
      clientId: payload.client_id as string,
      resource: payload.resource as string | undefined,
      scopes: scope === undefined ? undefined : scope.split(" ").filter((s) => s !== ""),
      all: payload,
    },
  };
}

/**
 * The issuer and subject an unchecked assertion names, for the audit line of a refusal: only
 * short strings, never the assertion.
 */
export function namedParties(jws: DecodedJws | undefined): { iss?: string; sub?: string } {
  const short = (value: unknown) =>
    typeof value === "string" && value.length <= MAX_SUB_LENGTH ? value : undefined;
  return { iss: short(jws?.payload.iss), sub: short(jws?.payload.sub) };
}
