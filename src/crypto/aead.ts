/**
 * Authenticated encryption of small records with AES-256-GCM. Associated data binds a sealed
 * value to where it belongs (its owner, its purpose): moved anywhere else, it fails to open.
 */
import { decodeBase64Url, encodeBase64Url } from "./base64url.ts";

const VERSION = "v1";
const IV_BYTES = 12;
const encoder = new TextEncoder();

/** `v1.<iv>.<ciphertext+tag>`, base64url; a fresh random IV every time. */
export async function seal(key: CryptoKey, plaintext: string, associated: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const ciphertext = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: encoder.encode(associated) },
    key,
    encoder.encode(plaintext),
  );
  return `${VERSION}.${encodeBase64Url(iv)}.${encodeBase64Url(new Uint8Array(ciphertext))}`;
}

/**
 * The plaintext, trying each key in turn (the current one first, then earlier ones during a
 * secret rotation); undefined when the value is malformed, tampered with, sealed for other
 * associated data, or sealed under a key not given.
 */
export async function unseal(
  keys: CryptoKey[],
  sealed: string,
  associated: string,
): Promise<string | undefined> {
  const [version, ivText, bodyText, extra] = sealed.split(".");
  if (version !== VERSION || extra !== undefined) return undefined;
  const iv = decodeBase64Url(ivText ?? "");
  const body = decodeBase64Url(bodyText ?? "");
  if (!iv || iv.length !== IV_BYTES || !body) return undefined;
  for (const key of keys) {
    try {
      const plaintext = await crypto.subtle.decrypt(
        { name: "AES-GCM", iv, additionalData: encoder.encode(associated) },
        key,
        body,
      );
      return new TextDecoder().decode(plaintext);
    } catch {
      // Not this key (or tampered): try the next.
    }
  }
  return undefined;
}
