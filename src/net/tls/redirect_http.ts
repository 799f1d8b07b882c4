/**
 * `tls.redirectHttp`: the plain-HTTP listener beside the TLS port. Every request is answered
 * 308 to the same path and query on baseUrl's origin (never the Host a client sent, so the
 * redirect cannot be pointed elsewhere); `/.well-known/acme-challenge/{token}` answers the ACME
 * server's HTTP-01 check from `challenges` (kept in storage, so any replica answers it).
 */
const CHALLENGE_PATH = "/.well-known/acme-challenge/";
const TOKEN = /^[A-Za-z0-9_-]{1,128}$/;

export function redirectHandler(
  baseUrl: string,
  challenges?: (token: string) => Promise<string | undefined>,
): (request: Request) => Promise<Response> {
  const origin = new URL(baseUrl).origin;
  return async (request) => {
    const url = new URL(request.url);
    if (url.pathname.startsWith(CHALLENGE_PATH) && challenges) {
      const token = url.pathname.slice(CHALLENGE_PATH.length);
      const answer = TOKEN.test(token) ? await challenges(token) : undefined;
      return answer === undefined
        ? new Response("no such challenge\n", { status: 404 })
        : new Response(answer, { headers: { "content-type": "application/octet-stream" } });
    }
    if (request.method !== "GET" && request.method !== "HEAD") await request.body?.cancel();
    return new Response(null, {
      status: 308,
      headers: { location: `${origin}${url.pathname}${url.search}` },
    });
  };
}
