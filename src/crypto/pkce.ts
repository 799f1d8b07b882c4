/** PKCE (RFC 7636) with the S256 method only; `plain` is refused by OAuth 2.1. */
import { matchesHash } from "./compare.ts";
import { sha256Base64Url } from "./base64url.ts";

/** RFC 7636 §4.1: 43–128 characters from the unreserved set. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
/** A base64url SHA-256 digest is exactly 43 characters. */
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export function isValidCodeVerifier(verifier: string): boolean {
  return VERIFIER.test(verifier);
}

export function isValidCodeChallenge(challenge: string): boolean {
  return CHALLENGE.test(challenge);
}

export async function s256Challenge(verifier: string): Promise<string> {
  return await sha256Base64Url(verifier);
}

/** True when the verifier hashes to the challenge; compared in constant time. */
export async function verifyS256(verifier: string, challenge: string): Promise<boolean> {
  if (!isValidCodeVerifier(verifier) || !isValidCodeChallenge(challenge)) return false;
  return await matchesHash(verifier, challenge);
}
