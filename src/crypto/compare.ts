/** Constant-time comparison of secrets, raw or as stored hashes. */
import { sha256Base64Url } from "./base64url.ts";

/** True when both arrays hold the same bytes; its time depends only on the length. */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i] ^ b[i];
  return difference === 0;
}

/**
 * True when `given` is `expected`, in a time that depends only on `expected`'s length: neither
 * how long `given` is nor where the two first differ shows. For secrets checked on every
 * request (static bearer tokens), where hashing both sides first would cost more than the rest
 * of the check. Compares UTF-16 code units: equal strings, equal secrets.
 */
export function equalsSecret(expected: string, given: string): boolean {
  let difference = expected.length ^ given.length;
  const wrap = given.length || 1;
  for (let i = 0; i < expected.length; i++) {
    difference |= expected.charCodeAt(i) ^ given.charCodeAt(i % wrap);
  }
  return difference === 0;
}

/** True when both strings are the same; its time depends only on their lengths. */
export function timingSafeEqualText(a: string, b: string): boolean {
  const encoder = new TextEncoder();
  return timingSafeEqual(encoder.encode(a), encoder.encode(b));
}

/**
 * True when the SHA-256 (base64url) of `given` is `storedHash`: how secrets kept only as
 * hashes (client secrets, login bindings, PKCE challenges) are checked.
 */
export async function matchesHash(given: string, storedHash: string): Promise<boolean> {
  return timingSafeEqualText(await sha256Base64Url(given), storedHash);
}
