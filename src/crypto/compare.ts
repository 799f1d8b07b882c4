/** Constant-time comparison of secrets, raw or as stored hashes. */
import { sha256Base64Url } from "./base64url.ts";

/**
 * True when `given` is `expected`, in a time that depends only on `expected`'s length: neither
 * how long `given` is nor where the two first differ shows. Every secret the gateway checks
 * goes through it: static bearer tokens on every request (where hashing both sides first would
 * cost more than the rest of the check), the metrics token, CSRF tokens, stored hashes.
 * Compares UTF-16 code units: equal strings, equal secrets.
 */
export function equalsSecret(expected: string, given: string): boolean {
  let difference = expected.length ^ given.length;
  const wrap = given.length || 1;
  for (let i = 0; i < expected.length; i++) {
    difference |= expected.charCodeAt(i) ^ given.charCodeAt(i % wrap);
  }
  return difference === 0;
}

/**
 * True when the SHA-256 (base64url) of `given` is `storedHash`: how secrets kept only as
 * hashes (client secrets, login bindings, PKCE challenges) are checked.
 */
export async function matchesHash(given: string, storedHash: string): Promise<boolean> {
  return equalsSecret(storedHash, await sha256Base64Url(given));
}
