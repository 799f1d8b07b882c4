/**
 * The one route table. Every path the gateway answers is here; handlers live in their modules.
 */
import { Hono } from "hono";
import type { Context } from "hono";
import type { ResolvedConfig, ServerConfig } from "../config/types.ts";
import { parseServerName, type ServerName } from "../core/ids.ts";
import type { Logger } from "../observability/logger.ts";
import type { FrontContext } from "../mcp/front/context.ts";
import { httpError } from "../mcp/front/http_util.ts";
import { handleLegacyMessage, handleLegacyStream } from "../mcp/front/legacy_sse.ts";
import {
  handleStreamableDelete,
  handleStreamableGet,
  handleStreamablePost,
} from "../mcp/front/streamable.ts";
import type { SessionRegistry } from "../mcp/sessions.ts";
import type { Session } from "../mcp/session.ts";
import type { ServerAuthenticator } from "./bearer.ts";
import { bookkeeping, finishRequest, type GatewayEnv, requestIdFor } from "./middleware.ts";
import { allowedOriginSet, isOriginAllowed } from "./origin.ts";
import { type AuthServer, limitBrowserAndOAuth, registerOAuthRoutes } from "./oauth_routes.ts";
import { RateLimits } from "./rate_limit.ts";
import { EXPOSITION_CONTENT_TYPE, type GatewayMetrics } from "../observability/metrics.ts";
import { timingSafeEqualText } from "../crypto/compare.ts";
import type { Principal } from "../core/principal.ts";
import { registerCredentialRoutes } from "./web_routes.ts";
import { DEFAULT_SCOPE, resourceMetadataUrl } from "../oauth/metadata.ts";

export interface RouteDeps {
  config: ResolvedConfig;
  sessions: SessionRegistry;
  authenticators: Map<ServerName, ServerAuthenticator>;
  logger: Logger;
  /** The authorization server, when `oauth:` is configured. */
  authServer?: AuthServer;
  now: () => number;
  metrics: GatewayMetrics;
}

type Handler = (request: Request, ctx: FrontContext) => Response | Promise<Response>;

const CORS_ALLOW_HEADERS =
  "authorization, content-type, accept, mcp-session-id, mcp-protocol-version, last-event-id";

/** The gateway's HTTP entry point: every route, with the bookkeeping every request gets. */
export interface Routes {
  fetch(request: Request, env: GatewayEnv["Bindings"]): Response | Promise<Response>;
}

/** `POST /{server}/mcp`, the route nearly every request takes. */
const MCP_POST_PATH = /^\/([^/]+)\/mcp$/;

export function buildRoutes(deps: RouteDeps): Routes {
  const { config, sessions, logger } = deps;
  const basePath = new URL(config.baseUrl).pathname.replace(/\/$/, "");
  const origins = allowedOriginSet(config.baseUrl, config.allowedOrigins);
  const corsOrigins = new Set(config.allowedOrigins);
  const limits = new RateLimits(
    config.rateLimits,
    deps.now,
    (limit) => deps.metrics.rateLimited.inc({ limit }),
  );
  // Well-known metadata lives at the origin's root even when the gateway has a base path.
  const root = new Hono<GatewayEnv>();
  const app = root.basePath(basePath || "/");

  const accounting = { logger, metrics: deps.metrics, basePath };
  root.use("*", bookkeeping(accounting));
  const failed = (requestId: string, error: unknown) => {
    logger.error("unhandled error", { requestId, error });
    return httpError(500, "server_error", "the gateway failed to handle this request");
  };
  root.onError((error, c) => failed(c.get("requestId"), error));
  root.notFound(() => httpError(404, "not_found", "no such endpoint"));

  app.get("/health", (c) => c.json({ status: "ok" }));
  app.get("/metrics", (c) => {
    const token = config.metrics.token?.reveal();
    if (!token) return httpError(404, "not_found", "no such endpoint");
    const given = /^Bearer[ ]+(\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1];
    if (!given || !timingSafeEqualText(given, token)) {
      return httpError(401, "unauthorized", "send Authorization: Bearer <metrics.token>", {
        "www-authenticate": 'Bearer realm="gatehouse-metrics"',
      });
    }
    return new Response(deps.metrics.registry.render(), {
      headers: { "content-type": EXPOSITION_CONTENT_TYPE },
    });
  });

  /** Resolves server, origin and auth, then runs the MCP handler for this request. */
  const mcpCall = async (
    handler: Handler,
    request: Request,
    serverName: string,
    remoteAddress: string | undefined,
  ): Promise<Response> => {
    const server = lookupServer(serverName);
    if (!server) {
      return httpError(404, "unknown_server", `no server named "${serverName}" is configured`);
    }
    const origin = request.headers.get("origin");
    if (!isOriginAllowed(origin, origins)) {
      return httpError(
        403,
        "forbidden_origin",
        `requests from origin ${origin} are not allowed; add it to allowedOrigins to permit it`,
      );
    }
    const response = await authorizedCall(request, remoteAddress, server, handler);
    if (origin && corsOrigins.has(origin)) addCors(response, origin);
    return response;
  };
  const mcp = (handler: Handler) => (c: Context<GatewayEnv>) =>
    mcpCall(handler, c.req.raw, c.req.param("server") ?? "", c.env?.remoteAddress);

  /** Authentication, then the rate limits, then the MCP handler; CORS is the caller's. */
  const authorizedCall = async (
    request: Request,
    remoteAddress: string | undefined,
    server: ServerConfig,
    handler: Handler,
  ): Promise<Response> => {
    const auth = await deps.authenticators.get(server.name)!.authenticate(
      request,
      remoteAddress ?? "unknown",
    );
    if (!auth.ok) {
      deps.metrics.authRefusals.inc({ server: server.name, reason: auth.error });
      return httpError(
        auth.error === "invalid_request" ? 400 : 401,
        auth.error,
        auth.description,
        { "www-authenticate": challenge(server.name, auth) },
      );
    }
    const limited = mcpRateLimited(auth.principal);
    if (limited) {
      return httpError(
        429,
        "rate_limited",
        `too many requests; try again in ${limited.wait} s (limit: rateLimits.${limited.limit})`,
        { "retry-after": String(limited.wait) },
      );
    }
    return await handler(request, {
      server,
      principal: auth.principal,
      sessions,
      maxMessageBytes: config.limits.maxMessageBytes,
      maxStreamBufferBytes: config.limits.maxStreamBufferBytes,
      onSlowReader,
      basePath,
      logger,
    });
  };

  const onSlowReader = (session: Session) => {
    deps.metrics.slowReaderCuts.inc({ server: session.server.name });
    logger.warn("client read its stream too slowly; the stream was cut", {
      server: session.server.name,
      session: session.id,
      user: session.principal.id,
      limit: config.limits.maxStreamBufferBytes,
    });
  };

  /** RFC 6750 §3 with RFC 9728 §5.1: where to find how to get a token for this server. */
  const challenge = (name: ServerName, auth: { error: string; description: string }) => {
    const parts = [`Bearer realm="gatehouse"`];
    if (deps.authServer) {
      parts.push(`resource_metadata="${resourceMetadataUrl(deps.authServer.issuer, name)}"`);
      parts.push(`scope="${DEFAULT_SCOPE}"`);
    }
    if (auth.error !== "unauthorized") {
      parts.push(`error="${auth.error}"`);
      parts.push(`error_description="${auth.description.replace(/["\\]/g, "'")}"`);
    }
    return parts.join(", ");
  };

  /** Per person, then per client: which limit stops this caller, and for how long. */
  const mcpRateLimited = (principal: Principal) => {
    const user = limits.take("mcpPerUser", principal.id);
    if (user) return { wait: user, limit: "mcpPerUser" };
    if (!principal.clientId) return undefined;
    const client = limits.take(
      "mcpPerClient",
      RateLimits.clientKey(principal.clientId, principal.id),
    );
    return client ? { wait: client, limit: "mcpPerClient" } : undefined;
  };

  const lookupServer = (raw: string): ServerConfig | undefined => {
    const name = parseServerName(raw);
    return name ? config.servers.get(name) : undefined;
  };

  const preflight = (c: Context<GatewayEnv>) => {
    const origin = c.req.header("origin");
    if (!origin || !corsOrigins.has(origin)) return new Response(null, { status: 204 });
    const response = new Response(null, {
      status: 204,
      headers: {
        "access-control-allow-methods": "GET, POST, DELETE, OPTIONS",
        "access-control-allow-headers": CORS_ALLOW_HEADERS,
        "access-control-max-age": "600",
      },
    });
    addCors(response, origin);
    return response;
  };

  limitBrowserAndOAuth(app, limits);
  registerOAuthRoutes(root, app, config, deps.authServer, logger, limits, deps.metrics);
  registerCredentialRoutes(app, deps.authServer);

  app.post("/:server/mcp", mcp(handleStreamablePost));
  app.get("/:server/mcp", mcp(handleStreamableGet));
  app.delete("/:server/mcp", mcp(handleStreamableDelete));
  app.options("/:server/mcp", preflight);

  // The legacy endpoint also speaks Streamable HTTP, so a modern client given /sse works:
  // a GET with a session header is the Streamable standalone stream, without one it is legacy.
  app.get(
    "/:server/sse",
    mcp((request, ctx) =>
      request.headers.has("mcp-session-id")
        ? handleStreamableGet(request, ctx)
        : handleLegacyStream(ctx)
    ),
  );
  app.post("/:server/sse", mcp(handleStreamablePost));
  app.delete("/:server/sse", mcp(handleStreamableDelete));
  app.options("/:server/sse", preflight);
  app.post("/:server/message", mcp(handleLegacyMessage));
  app.options("/:server/message", preflight);

  for (const path of ["/:server/mcp", "/:server/sse", "/:server/message"]) {
    app.all(
      path,
      (c) =>
        httpError(405, "method_not_allowed", `${c.req.method} is not supported here`, {
          allow: path.endsWith("message") ? "POST, OPTIONS" : "GET, POST, DELETE, OPTIONS",
        }),
    );
  }
  /**
   * `POST /{server}/mcp` skips Hono's router and middleware chain (about 10 µs a request under
   * load, more at low load) and gets the same bookkeeping, checks and handler directly; every
   * other request, and any server name Hono would decode differently, goes through Hono.
   */
  const mcpPost = async (
    request: Request,
    path: string,
    serverName: string,
    env: GatewayEnv["Bindings"],
  ) => {
    const started = performance.now();
    const id = requestIdFor(request.headers.get("x-request-id"));
    let response: Response;
    try {
      response = await mcpCall(handleStreamablePost, request, serverName, env?.remoteAddress);
    } catch (error) {
      response = failed(id, error);
    }
    finishRequest(accounting, { id, method: "POST", path, started }, response);
    return response;
  };

  return {
    fetch(request, env) {
      if (request.method === "POST") {
        const path = pathOf(request.url);
        const match = path.startsWith(basePath)
          ? MCP_POST_PATH.exec(path.slice(basePath.length))
          : null;
        if (match && !match[1].includes("%")) return mcpPost(request, path, match[1], env);
      }
      return root.fetch(request, env);
    },
  };
}

/** The path of an absolute URL, without parsing all of it (no query, no fragment). */
function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  let end = url.length;
  const query = url.indexOf("?", start);
  if (query >= 0) end = query;
  const hash = url.indexOf("#", start);
  if (hash >= 0 && hash < end) end = hash;
  return url.slice(start, end);
}

function addCors(response: Response, origin: string): void {
  response.headers.set("access-control-allow-origin", origin);
  response.headers.set("access-control-expose-headers", "mcp-session-id, www-authenticate");
  response.headers.append("vary", "origin");
}
