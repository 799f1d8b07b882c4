/**
 * The gateway's browser cookies: HttpOnly, SameSite=Lax, Secure unless the gateway runs on
 * http://localhost, and `__Host-` prefixed when the browser can enforce that (Secure, path /).
 */

export interface CookiePolicy {
  secure: boolean;
  path: string;
}

export function cookiePolicy(baseUrl: string): CookiePolicy {
  const url = new URL(baseUrl);
  return { secure: url.protocol === "https:", path: url.pathname.replace(/\/$/, "") || "/" };
}

export function cookieName(policy: CookiePolicy, name: string): string {
  return policy.secure && policy.path === "/" ? `__Host-${name}` : name;
}

export function setCookie(
  policy: CookiePolicy,
  name: string,
  value: string,
  maxAgeSeconds: number,
): string {
  return [
    `${cookieName(policy, name)}=${value}`,
    `Path=${policy.path}`,
    `Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`,
    "HttpOnly",
    "SameSite=Lax",
    ...(policy.secure ? ["Secure"] : []),
  ].join("; ");
}

export function clearCookie(policy: CookiePolicy, name: string): string {
  return setCookie(policy, name, "", 0);
}

/** One cookie's value from a Cookie header; only our own base64url values are accepted. */
export function readCookie(
  header: string | null,
  policy: CookiePolicy,
  name: string,
): string | undefined {
  if (!header) return undefined;
  const wanted = cookieName(policy, name);
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0 || part.slice(0, eq).trim() !== wanted) continue;
    const value = part.slice(eq + 1).trim();
    return /^[A-Za-z0-9_-]{16,128}$/.test(value) ? value : undefined;
  }
  return undefined;
}
