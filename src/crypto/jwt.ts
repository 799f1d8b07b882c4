/**
 * HS256 JWTs on WebCrypto. Verification pins everything an attacker could choose: the
 * algorithm (`HS256` only, so `none` and key confusion are impossible), the `typ`, the issuer,
 * the audience and the lifetime. Failures carry a stable code and a sentence for the caller.
 */
import { GatehouseError } from "../core/errors.ts";
import { decodeBase64Url, decodeJsonSegment, encodeBase64Url } from "./base64url.ts";

export type JwtClaims = Record<string, unknown> & {
  iss?: string;
  sub?: string;
  aud?: string | string[];
  exp?: number;
  iat?: number;
  nbf?: number;
  jti?: string;
};

export type JwtErrorCode =
  | "malformed"
  | "unsupported_algorithm"
  | "wrong_type"
  | "bad_signature"
  | "wrong_issuer"
  | "wrong_audience"
  | "expired"
  | "not_yet_valid";

export class JwtError extends GatehouseError<JwtErrorCode> {}

export interface VerifyOptions {
  /** Keys to try in order: the current one first, then those kept for rotation. */
  keys: CryptoKey[];
  typ: string;
  issuer: string;
  /** The token's `aud` must contain this value. */
  audience: string;
  /** Seconds since the epoch. */
  now: number;
  /** Leeway for clocks that disagree a little, in seconds. */
  skewSeconds: number;
}

const encoder = new TextEncoder();
/** Tokens larger than this are refused before any parsing. */
const MAX_TOKEN_LENGTH = 8_192;

function encodeJson(value: unknown): string {
  return encodeBase64Url(encoder.encode(JSON.stringify(value)));
}

export async function signJwt(key: CryptoKey, typ: string, claims: JwtClaims): Promise<string> {
  const input = `${encodeJson({ alg: "HS256", typ })}.${encodeJson(claims)}`;
  const signature = await crypto.subtle.sign("HMAC", key, encoder.encode(input));
  return `${input}.${encodeBase64Url(new Uint8Array(signature))}`;
}

/** Looks like a JWT at all: three base64url segments. Cheap, for telling token kinds apart. */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
}

export async function verifyJwt(token: string, options: VerifyOptions): Promise<JwtClaims> {
  if (token.length > MAX_TOKEN_LENGTH || !looksLikeJwt(token)) {
    throw new JwtError("malformed", "the token is not a JWT");
  }
  const [headerPart, payloadPart, signaturePart] = token.split(".");
  const header = decodeJsonSegment(headerPart);
  const claims = decodeJsonSegment(payloadPart) as JwtClaims | undefined;
  const signature = decodeBase64Url(signaturePart);
  if (!header || !claims || !signature) {
    throw new JwtError("malformed", "the token's header or claims are not valid JSON");
  }
  if (header.alg !== "HS256" || "crit" in header) {
    throw new JwtError("unsupported_algorithm", `the token's algorithm must be HS256`);
  }
  if (header.typ !== options.typ) {
    throw new JwtError("wrong_type", `the token's type must be ${options.typ}`);
  }
  const input = encoder.encode(`${headerPart}.${payloadPart}`);
  let valid = false;
  for (const key of options.keys) {
    if (await crypto.subtle.verify("HMAC", key, signature, input)) {
      valid = true;
      break;
    }
  }
  if (!valid) throw new JwtError("bad_signature", "the token's signature does not verify");
  if (claims.iss !== options.issuer) {
    throw new JwtError("wrong_issuer", "the token was issued by someone else");
  }
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!audiences.includes(options.audience)) {
    throw new JwtError("wrong_audience", `the token is not meant for ${options.audience}`);
  }
  if (typeof claims.exp !== "number" || claims.exp + options.skewSeconds <= options.now) {
    throw new JwtError("expired", "the token has expired");
  }
  if (typeof claims.nbf === "number" && claims.nbf - options.skewSeconds > options.now) {
    throw new JwtError("not_yet_valid", "the token is not valid yet");
  }
  if (typeof claims.iat === "number" && claims.iat - options.skewSeconds > options.now) {
    throw new JwtError("not_yet_valid", "the token was issued in the future");
  }
  return claims;
}
