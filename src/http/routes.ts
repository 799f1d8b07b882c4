/**
 * The one route table: every method and path the gateway answers, in the order Hono runs them,
 * and the one `fetch` they sit behind. Handlers live in their modules.
 */
import { Hono } from "hono";
import type { Context, MiddlewareHandler } from "hono";
import type { ResolvedConfig } from "../config/types.ts";
import type { Clock } from "../core/clock.ts";
import type { ServerName } from "../core/ids.ts";
import { equalsSecret } from "../crypto/compare.ts";
import { httpError } from "../mcp/front/http_util.ts";
import { handleLegacyMessage, handleLegacyStream } from "../mcp/front/legacy_sse.ts";
import {
  handleStreamableDelete,
  handleStreamableGet,
  handleStreamablePost,
} from "../mcp/front/streamable.ts";
import type { SessionRegistry } from "../mcp/sessions/sessions.ts";
import type { StatelessLinks } from "../mcp/stateless/stateless_links.ts";
import type { Logger } from "../observability/logger.ts";
import { EXPOSITION_CONTENT_TYPE, type GatewayMetrics } from "../observability/metrics.ts";
import type { StorageMonitor } from "../store/monitored.ts";
import type { Readiness } from "../store/readiness.ts";
import type { Policies } from "../policy/server_policy.ts";
import { type AssertionKeys, JWKS_MAX_AGE_S } from "../credentials/assertion_keys.ts";
import type { ServerAuthenticator } from "./bearer.ts";
import { mcpEndpoints, type McpHandler } from "./mcp_routes.ts";
import { finished, type GatewayEnv } from "./finish.ts";
import { type AuthServer, oauthEndpoints, oauthLimits } from "./oauth_routes.ts";
import { RateLimits } from "./rate_limit.ts";
import {
  all,
  atOrigin,
  compileRoutes,
  get,
  type Method,
  options,
  otherwise,
  post,
  type Route,
  route,
  use,
} from "./route_table.ts";
import { credentialPages, needsOAuth } from "./web_routes.ts";
import { approvalPages, type ApprovalParts, approvalsNeedOAuth } from "./approval_routes.ts";
import {
  UPSTREAM_CLIENT_PATH,
  upstreamClientDocument,
} from "../credentials/mcp_client_document.ts";

export interface RouteDeps {
  config: ResolvedConfig;
  sessions: SessionRegistry;
  links: StatelessLinks;
  authenticators: Map<ServerName, ServerAuthenticator>;
  logger: Logger;
  /** The authorization server, when `oauth:` is configured. */
  authServer?: AuthServer;
  clock: Clock;
  metrics: GatewayMetrics;
  /** Each server's `access:` and `tools:`, compiled for this configuration. */
  policies: Policies;
  /** Whether the storage answers, for /health (absent: not watched, said as up). */
  storage?: StorageMonitor;
  /** Asks the storage whether it answers now, for /ready (absent: not watched, always ready). */
  readiness?: Readiness;
  /** The operator console, when `admin:` is configured (web/admin/). */
  console?: { handle(request: Request): Promise<Response> };
  /** Held calls' records, for the approval pages. */
  approvals?: ApprovalParts;
  /** The keys of identity assertions to backends, published at JWKS_PATH. */
  assertionKeys?: AssertionKeys;
}

/** Where backends find the keys that verify Gatehouse's identity assertions. */
export const JWKS_PATH = "/.well-known/gatehouse/jwks.json";

/** The gateway's HTTP entry point: every route, with the finishing every request gets. */
export interface Routes {
  fetch(request: Request, env?: GatewayEnv["Bindings"]): Promise<Response>;
}

export function buildRoutes(deps: RouteDeps): Routes {
  const { config, logger, metrics } = deps;
  const basePath = new URL(config.baseUrl).pathname.replace(/\/$/, "");
  const limits = new RateLimits(
    config.rateLimits,
    deps.clock,
    (limit) => metrics.rateLimited.inc({ limit }),
  );
  const mcp = mcpEndpoints({ ...deps, limits, basePath, issuer: deps.authServer?.issuer });
  const oauth = oauthEndpoints(config, deps.authServer, logger, limits, metrics);
  const limit = oauthLimits(limits);
  const pages = credentialPages(deps.authServer);
  const approvals = approvalPages(deps.authServer, deps.approvals, deps.clock);

  /** An MCP endpoint: server, origin, auth and limits are checked, then the front's handler. */
  const serve = (method: Method, path: string, handler: McpHandler, lane?: "fast lane") =>
    route(method, path, mcp.route(handler), lane && mcp.fast(handler));
  /** Rows that exist only when the gateway sits under a base path. */
  const underBasePath = (...rows: Route[]) => basePath ? rows : [];
  const metadata = "/.well-known/oauth-authorization-server";
  const resource = "/.well-known/oauth-protected-resource";

  // Paths are under the base path unless `atOrigin`. For one request Hono runs the matching
  // rows top to bottom until one answers: `use` rows first, the 405 rows after the methods.
  const table: Route[] = [
    // 200 while storage is down too: this replica still serves what needs none, and its peers
    // share the same database, so a balancer taking them all out would stop everything.
    get("/health", (c) => c.json({ status: "ok", storage: deps.storage?.state ?? "up" })),
    // For a balancer that should send new traffic elsewhere while this replica's storage is
    // away (docs/deploy.md, replicas): 503 with Retry-After until a read succeeds again.
    get("/ready", async (c) => {
      if (!deps.readiness || await deps.readiness.check()) {
        return c.json({ status: "ok", storage: "up" });
      }
      return c.json({ status: "unavailable", storage: "down" }, 503, { "retry-after": "5" });
    }),
    get("/metrics", (c) => metricsEndpoint(c, config, metrics)),

    // Per-address limits on the OAuth endpoints and the browser pages.
    use("/register", limit.register),
    use("/token", limit.token),
    use("/token", limit.tokenFailures),
    use("/revoke", limit.token),
    use("/revoke", limit.tokenFailures),
    use("/authorize/*", limit.browser),
    use("/oauth/*", limit.browser),
    use("/logout", limit.browser),
    use("/my/*", limit.browser),
    use("/approvals", limit.browser),
    use("/approvals/*", limit.browser),

    // RFC 8414 §3 puts the well-known segment before the issuer's path; clients that append it
    // instead are answered too.
    atOrigin(get(`${metadata}${basePath}`, oauth.serverMetadata)),
    ...underBasePath(get(metadata, oauth.serverMetadata)),
    // RFC 9728: {resource}{basePath}/{service}[/mcp|/sse], and the base URL's own document.
    atOrigin(get(`${resource}${basePath}/:server`, oauth.resourceMetadata)),
    atOrigin(get(`${resource}${basePath}/:server/:endpoint{mcp|sse}`, oauth.resourceMetadata)),
    atOrigin(get(`${resource}${basePath}`, oauth.gatewayMetadata)),
    ...underBasePath(
      get(resource, oauth.gatewayMetadata),
      get(`${resource}/:server`, oauth.resourceMetadata),
    ),
    // Identity assertions' keys (docs/identity.md); never the authorization server's jwks_uri:
    // its access tokens are HS256 and for the gateway alone.
    get(JWKS_PATH, async (c) => {
      if (!deps.assertionKeys) return httpError(404, "not_found", "no identity assertion keys");
      const keys = await deps.assertionKeys.published();
      return c.json({ keys }, 200, { "cache-control": `public, max-age=${JWKS_MAX_AGE_S}` });
    }),
    // Preflights of browser-based clients (MCP Inspector): metadata, registration, token.
    atOrigin(options("/.well-known/*", oauth.preflight)),
    ...underBasePath(options("/.well-known/*", oauth.preflight)),
    options("/register", oauth.preflight),
    options("/token", oauth.preflight),
    options("/revoke", oauth.preflight),

    // The authorization server.
    post("/register", oauth.register),
    get("/clients/:clientId", oauth.client),
    post("/token", oauth.token),
    post("/revoke", oauth.revoke),
    get("/authorize", oauth.authorize),
    post("/authorize/consent", oauth.consent),
    get("/oauth/callback", oauth.callback),
    get("/logout", oauth.logoutPage),
    post("/logout", oauth.logout),

    // People's own service credentials; without `oauth:` each of these paths says it needs it.
    ...(pages
      ? [
        get("/my/access", pages.access),
        post("/my/access/revoke", pages.revokeAccess),
        get("/my/tokens", pages.tokens),
        post("/my/tokens/set", pages.setToken),
        post("/my/tokens/delete", pages.deleteToken),
        get("/oauth/services", pages.services),
        get("/oauth/complete", pages.complete),
        get("/oauth/connect", pages.connect),
        get("/oauth/callback/:service", pages.callback),
        post("/oauth/disconnect", pages.disconnect),
        // Gatehouse's client ID metadata document for remote MCP servers (kind: mcp).
        get(UPSTREAM_CLIENT_PATH, (c) => {
          const document = upstreamClientDocument(config.baseUrl, config.servers.values());
          return document
            ? c.json(document, 200, { "cache-control": "public, max-age=300" })
            : httpError(404, "not_found", "no client ID metadata document on a plain-http baseUrl");
        }),
      ]
      : [
        "/my/access",
        "/my/access/*",
        "/my/tokens",
        "/my/tokens/*",
        "/oauth/services",
        "/oauth/complete",
        "/oauth/connect",
        "/oauth/callback/:service",
        "/oauth/disconnect",
        UPSTREAM_CLIENT_PATH,
      ].map((path) => all(path, needsOAuth))),

    // The operator console: its own sign-in, pages and actions (web/admin/console.ts).
    ...(deps.console && config.admin
      ? consoleRows(config.admin.path, deps.console, limit.browser)
      : []),
    // Held tool calls (approvals:): a person approves or denies one, signed in.
    ...(approvals
      ? [
        get("/approvals", approvals.list),
        get("/approvals/:id", approvals.page),
        post("/approvals/:id", approvals.decide),
      ]
      : ["/approvals", "/approvals/:id"].map((path) => all(path, approvalsNeedOAuth))),

    // MCP, Streamable HTTP. POST is nearly every request: the fast lane serves it before Hono's
    // router is consulted (about 10 µs a request under load); a server name holding `%` is
    // left to Hono, which decodes it.
    serve("POST", "/:server/mcp", handleStreamablePost, "fast lane"),
    serve("GET", "/:server/mcp", handleStreamableGet),
    serve("DELETE", "/:server/mcp", handleStreamableDelete),
    options("/:server/mcp", mcp.preflight),
    // The legacy endpoint also speaks Streamable HTTP, so a modern client given /sse works.
    serve("GET", "/:server/sse", legacyOrStandaloneStream),
    serve("POST", "/:server/sse", handleStreamablePost),
    serve("DELETE", "/:server/sse", handleStreamableDelete),
    options("/:server/sse", mcp.preflight),
    serve("POST", "/:server/message", handleLegacyMessage),
    options("/:server/message", mcp.preflight),
    all("/:server/mcp", mcp.notAllowed("GET, POST, DELETE, OPTIONS")),
    all("/:server/sse", mcp.notAllowed("GET, POST, DELETE, OPTIONS")),
    all("/:server/message", mcp.notAllowed("POST, OPTIONS")),

    otherwise(() => httpError(404, "not_found", "no such endpoint")),
  ];

  // Well-known metadata lives at the origin's root even when the gateway has a base path.
  const root = new Hono<GatewayEnv>();
  // The one place errors are rendered is `finished`: Hono hands every error up to it.
  root.onError((error) => {
    throw error;
  });
  const fast = compileRoutes(root, root.basePath(basePath || "/"), table, basePath);
  if (!fast) throw new Error("the route table has no fast lane");
  return {
    fetch: finished({ logger, metrics, basePath }, (request, env, path) => {
      const server = request.method === fast.method ? fast.match(path) : undefined;
      return server === undefined ? root.fetch(request, env) : fast.serve(request, server, env);
    }),
  };
}

/** Every path under the console's, its pages limited per address as the other browser pages. */
function consoleRows(
  path: string,
  console: { handle(request: Request): Promise<Response> },
  limit: MiddlewareHandler<GatewayEnv>,
): Route[] {
  const handle = (c: Context<GatewayEnv>) => console.handle(c.req.raw);
  return [use(path, limit), use(`${path}/*`, limit), all(path, handle), all(`${path}/*`, handle)];
}

/** A GET with a session header is the Streamable standalone stream; without one, legacy SSE. */
const legacyOrStandaloneStream: McpHandler = (request, ctx) =>
  request.headers.has("mcp-session-id")
    ? handleStreamableGet(request, ctx)
    : handleLegacyStream(ctx);

/** The Prometheus exposition, for `metrics.token` holders only; 404 when none is configured. */
function metricsEndpoint(
  c: Context<GatewayEnv>,
  config: ResolvedConfig,
  metrics: GatewayMetrics,
): Response {
  const token = config.metrics.token?.reveal();
  if (!token) return httpError(404, "not_found", "no such endpoint");
  const given = /^Bearer[ ]+(\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1];
  if (!given || !equalsSecret(token, given)) {
    return httpError(401, "unauthorized", "send Authorization: Bearer <metrics.token>", {
      "www-authenticate": 'Bearer realm="gatehouse-metrics"',
    });
  }
  return new Response(metrics.registry.render(), {
    headers: { "content-type": EXPOSITION_CONTENT_TYPE },
  });
}
