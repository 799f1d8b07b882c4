/**
 * The route an HTTP request took, as `http.route` and the name of its span (`POST /token`)
 * when tracing is on (observability/tracing.ts). Deno's own server span carries the request
 * (method, path, status); the gateway names it after the route, with the parts that vary
 * (server, client id, service) as placeholders so span names stay few.
 */

/** Paths the route table answers as they are: OAuth, sign-in and the /my pages. */
const STATIC =
  /^\/(register|token|revoke|authorize(\/consent)?|logout|oauth\/[a-z]+|my\/[a-z]+(\/[a-z]+)?)$/;

/**
 * The route of `path` (as Hono sees it), or undefined for one the gateway does not answer
 * (a 404: a scanner's paths must not become span names).
 */
export function httpRoute(
  path: string,
  basePath: string,
  kind: string,
  status: number,
): string | undefined {
  if (status === 404) return undefined;
  const rest = path.startsWith(basePath) ? path.slice(basePath.length) : path;
  switch (kind) {
    case "mcp":
    case "sse":
    case "message":
      return `${basePath}/{server}/${kind}`;
    case "health":
    case "ready":
    case "metrics":
      return `${basePath}${rest}`;
    case "oauth":
    case "page": {
      const wellKnown =
        /^\/\.well-known\/(oauth-authorization-server|oauth-protected-resource)(\/.*)?$/
          .exec(path);
      if (wellKnown) return `/.well-known/${wellKnown[1]}${wellKnown[2] ? "/{resource}" : ""}`;
      if (rest.startsWith("/clients/")) return `${basePath}/clients/{client_id}`;
      if (rest.startsWith("/oauth/callback/")) return `${basePath}/oauth/callback/{service}`;
      return STATIC.test(rest) ? `${basePath}${rest}` : undefined;
    }
    default:
      return undefined;
  }
}
