/**
 * Per-purpose keys derived from the master secret with HKDF-SHA256. Each job gets its own
 * label, so a key that leaks from one purpose (say, a cookie MAC) says nothing about another
 * (the JWT signing key), and no key ever serves two jobs.
 */
import type { Secret } from "../core/secret.ts";

export type KeyPurpose =
  | "jwt-signing"
  | "vault-encryption"
  | "cookie-mac"
  | "csrf"
  | "state"
  | "mcp-request-state"
  | "tls-keys"
  | "idp-tokens"
  | "admin-csrf"
  | "assertion-keys";

const SALT = new TextEncoder().encode("gatehouse/v1");

/** 32 bytes of key material for one purpose. */
export async function deriveKeyBytes(
  master: Secret,
  purpose: KeyPurpose,
): Promise<Uint8Array<ArrayBuffer>> {
  const base = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(master.reveal()),
    "HKDF",
    false,
    ["deriveBits"],
  );
  const bits = await crypto.subtle.deriveBits(
    { name: "HKDF", hash: "SHA-256", salt: SALT, info: new TextEncoder().encode(purpose) },
    base,
    256,
  );
  return new Uint8Array(bits);
}

/** An HMAC-SHA256 key for one purpose; it can sign and verify, nothing else. */
export async function deriveHmacKey(master: Secret, purpose: KeyPurpose): Promise<CryptoKey> {
  return await crypto.subtle.importKey(
    "raw",
    await deriveKeyBytes(master, purpose),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign", "verify"],
  );
}

/** An AES-256-GCM key for one purpose; it can encrypt and decrypt, nothing else. */
export async function deriveAesKey(master: Secret, purpose: KeyPurpose): Promise<CryptoKey> {
  return await crypto.subtle.importKey(
    "raw",
    await deriveKeyBytes(master, purpose),
    { name: "AES-GCM" },
    false,
    ["encrypt", "decrypt"],
  );
}
