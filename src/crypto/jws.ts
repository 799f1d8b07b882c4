/**
 * Compact JWS with public keys (RFC 7515), for assertions other parties sign: split and decoded
 * without trusting anything, then verified on WebCrypto against a JWK (RFC 7517). Only the
 * algorithms in `PUBLIC_KEY_ALGORITHMS` exist here; `none` and HS* cannot be asked for, so an
 * attacker cannot choose an algorithm that a published key would satisfy.
 */
import { decodeBase64Url, decodeJsonSegment } from "./base64url.ts";

export const PUBLIC_KEY_ALGORITHMS = ["RS256", "PS256", "ES256", "EdDSA"] as const;
export type PublicKeyAlgorithm = typeof PUBLIC_KEY_ALGORITHMS[number];

/** A public JSON Web Key as an issuer publishes it; only the members used here are named. */
export interface PublicJwk {
  kty?: unknown;
  kid?: unknown;
  alg?: unknown;
  use?: unknown;
  crv?: unknown;
  n?: unknown;
  e?: unknown;
  x?: unknown;
  y?: unknown;
}

export interface DecodedJws {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  /** The bytes the signature covers: `header.payload` as sent. */
  signingInput: Uint8Array<ArrayBuffer>;
  signature: Uint8Array<ArrayBuffer>;
}

const MIN_RSA_BYTES = 256;
/** Assertions larger than this are refused before any parsing. */
export const MAX_JWS_LENGTH = 16_384;

/** The three parts of a compact JWS, or why it is not one (a sentence without the token). */
export function decodeJws(token: string): DecodedJws | string {
  if (token.length > MAX_JWS_LENGTH) return `it is longer than ${MAX_JWS_LENGTH} characters`;
  const parts = token.split(".");
  if (parts.length !== 3) return "it is not a compact JWS (three base64url parts)";
  const header = decodeJsonSegment(parts[0]);
  const payload = decodeJsonSegment(parts[1]);
  const signature = decodeBase64Url(parts[2]);
  if (!header) return "its header is not base64url JSON";
  if (!payload) return "its payload is not base64url JSON";
  if (!signature) return "its signature is not base64url";
  const signingInput = new TextEncoder().encode(`${parts[0]}.${parts[1]}`);
  return { header, payload, signingInput, signature };
}

/**
 * Whether the header lists critical extensions (`crit`, RFC 7515 §4.1.11): the recipient must
 * refuse a JWS whose critical extensions it does not understand, and none is understood here
 * (an issuer may use one to narrow where its token counts; ignoring it would widen that).
 */
export function namesCriticalExtensions(header: Record<string, unknown>): boolean {
  return header.crit !== undefined;
}

export function isPublicKeyAlgorithm(alg: unknown): alg is PublicKeyAlgorithm {
  return (PUBLIC_KEY_ALGORITHMS as readonly unknown[]).includes(alg);
}

/** WebCrypto's names for each algorithm: to import the key, and to verify with it. */
function algorithmOf(alg: PublicKeyAlgorithm): {
  kty: string;
  crv?: string;
  importAs: RsaHashedImportParams | EcKeyImportParams | Algorithm;
  verifyAs: Algorithm | RsaPssParams | EcdsaParams;
} {
  switch (alg) {
    case "RS256":
      return {
        kty: "RSA",
        importAs: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
        verifyAs: { name: "RSASSA-PKCS1-v1_5" },
      };
    case "PS256":
      return {
        kty: "RSA",
        importAs: { name: "RSA-PSS", hash: "SHA-256" },
        verifyAs: { name: "RSA-PSS", saltLength: 32 } as RsaPssParams,
      };
    case "ES256":
      return {
        kty: "EC",
        crv: "P-256",
        importAs: { name: "ECDSA", namedCurve: "P-256" },
        verifyAs: { name: "ECDSA", hash: "SHA-256" } as EcdsaParams,
      };
    case "EdDSA":
      return {
        kty: "OKP",
        crv: "Ed25519",
        importAs: { name: "Ed25519" },
        verifyAs: { name: "Ed25519" },
      };
  }
}

/**
 * Whether `jwk` can verify `alg`: its type and curve fit, and its own `alg` and `use`, when it
 * states them, do not say otherwise (RFC 7517 §4.2, §4.4).
 */
export function keyFits(jwk: PublicJwk, alg: PublicKeyAlgorithm): boolean {
  const wanted = algorithmOf(alg);
  if (jwk.kty !== wanted.kty) return false;
  if (wanted.crv !== undefined && jwk.crv !== wanted.crv) return false;
  if (jwk.alg !== undefined && jwk.alg !== alg) return false;
  return jwk.use === undefined || jwk.use === "sig";
}

/** Imports the public members of `jwk` for `alg`; undefined when they do not form a key. */
export async function importPublicJwk(
  jwk: PublicJwk,
  alg: PublicKeyAlgorithm,
): Promise<CryptoKey | undefined> {
  if (!keyFits(jwk, alg)) return undefined;
  const wanted = algorithmOf(alg);
  // An RSA modulus under 2048 bits can be factored by a determined attacker: not a key.
  const modulus = typeof jwk.n === "string" ? decodeBase64Url(jwk.n) : undefined;
  if (wanted.kty === "RSA" && (!modulus || modulus.length < MIN_RSA_BYTES)) return undefined;
  // Only the public members: a published private part, `key_ops` or `ext` cannot change
  // what the imported key is or may do.
  const members = wanted.kty === "RSA"
    ? { kty: "RSA", n: jwk.n, e: jwk.e }
    : wanted.kty === "EC"
    ? { kty: "EC", crv: jwk.crv, x: jwk.x, y: jwk.y }
    : { kty: "OKP", crv: jwk.crv, x: jwk.x };
  try {
    return await crypto.subtle.importKey(
      "jwk",
      members as JsonWebKey,
      wanted.importAs,
      false,
      ["verify"],
    );
  } catch {
    return undefined;
  }
}

/** Whether `jws`'s signature verifies with `key` under `alg`. */
export async function verifyJws(
  jws: DecodedJws,
  key: CryptoKey,
  alg: PublicKeyAlgorithm,
): Promise<boolean> {
  try {
    return await crypto.subtle.verify(
      algorithmOf(alg).verifyAs,
      key,
      jws.signature,
      jws.signingInput,
    );
  } catch {
    return false;
  }
}
