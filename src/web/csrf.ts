/**
 * CSRF defences the browser pages share: a token that is an HMAC of one browser session's id
 * (bound to that session only; `purpose` keeps the console's tokens apart from the person's
 * pages'), and a same-origin check on the form's request, from `Origin` or, where the page's
 * referrer policy makes the browser send `Origin: null`, from `Sec-Fetch-Site`.
 */
import { encodeBase64Url } from "../crypto/base64url.ts";
import { equalsSecret } from "../crypto/compare.ts";

/** The CSRF token of session `sessionId` for `purpose` ("" is the SSO pages' own). */
export async function csrfTokenFor(
  key: CryptoKey,
  sessionId: string,
  purpose = "",
): Promise<string> {
  const data = purpose ? `${purpose}\u0000${sessionId}` : sessionId;
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(data));
  return encodeBase64Url(new Uint8Array(mac));
}

/** Whether `given` is session `sessionId`'s token for `purpose`, compared in constant time. */
export async function checkCsrfFor(
  key: CryptoKey,
  sessionId: string,
  given: string | null | undefined,
  purpose = "",
): Promise<boolean> {
  if (!given) return false;
  return equalsSecret(await csrfTokenFor(key, sessionId, purpose), given);
}

/**
 * Whether a form's request came from a page of one of `origins` (the gateway's own): its
 * `Origin` names one, or the browser says `Sec-Fetch-Site: same-origin`. A request with
 * neither is refused: a browser sends at least one on every POST.
 */
export function sameOrigin(request: Request, origins: ReadonlySet<string>): boolean {
  const origin = request.headers.get("origin");
  if (origin !== null && origin !== "null") return origins.has(origin);
  return request.headers.get("sec-fetch-site") === "same-origin";
}
