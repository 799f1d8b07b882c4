/**
 * The browser flows' redirects: never cached (each carries a one-time state, code or request
 * id), and able to carry the cookies a step sets on the way.
 */
import { NO_STORE } from "../oauth/errors.ts";

export function redirect(status: 302 | 303, location: string, cookies: string[] = []): Response {
  return withCookies(new Response(null, { status, headers: { location, ...NO_STORE } }), cookies);
}

/** Adds Set-Cookie headers to a response built elsewhere (a page, an OAuth redirect). */
export function withCookies(response: Response, cookies: string[]): Response {
  for (const cookie of cookies) response.headers.append("set-cookie", cookie);
  return response;
}
