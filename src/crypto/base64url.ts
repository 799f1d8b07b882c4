/** Base64url without padding (RFC 4648 §5), the encoding of JWTs, PKCE and our random ids. */

export function encodeBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The bytes, or undefined when the text is not strict unpadded base64url. */
export function decodeBase64Url(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return undefined;
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A JWT/JWS segment as the JSON object it encodes, or undefined when it is not base64url, not
 * UTF-8, not JSON, or JSON but not an object.
 */
export function decodeJsonSegment(segment: string): Record<string, unknown> | undefined {
  const bytes = decodeBase64Url(segment);
  if (!bytes) return undefined;
  try {
    const value = JSON.parse(strictUtf8.decode(bytes));
    return value && typeof value === "object" && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

export async function sha256Base64Url(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return encodeBase64Url(new Uint8Array(digest));
}
