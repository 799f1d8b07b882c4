/**
 * What every MCP endpoint does before the front's handler runs: find the server, check the
 * origin, authenticate (with the RFC 9728 challenge when that fails), check the server's
 * `access:` against the caller (403), apply the per-person and per-client limits, and add CORS
 * for allowed origins. The route table in routes.ts says which method and path reach which
 * front handler.
 */
import type { Context } from "hono";
import type { ResolvedConfig, ServerConfig } from "../config/types.ts";
import { parseServerName, type ServerName } from "../core/ids.ts";
import type { Principal } from "../core/principal.ts";
import type { FrontContext } from "../mcp/front/context.ts";
import { httpError } from "../mcp/front/http_util.ts";
import type { Session } from "../mcp/sessions/session.ts";
import type { SessionRegistry } from "../mcp/sessions/sessions.ts";
import type { StatelessLinks } from "../mcp/stateless/stateless_links.ts";
import { DEFAULT_SCOPE, resourceMetadataUrl } from "../oauth/metadata.ts";
import type { Logger } from "../observability/logger.ts";
import type { GatewayMetrics } from "../observability/metrics.ts";
import type { Policies } from "../policy/server_policy.ts";
import type { ServerAuthenticator } from "./bearer.ts";
import type { GatewayEnv } from "./finish.ts";
import { allowedOriginSet, isOriginAllowed } from "./origin.ts";
import { RateLimits } from "./rate_limit.ts";
import type { FastHandler } from "./route_table.ts";

/** A handler of the MCP front, run once the request is authorized. */
export type McpHandler = (request: Request, ctx: FrontContext) => Response | Promise<Response>;

export interface McpDeps {
  config: ResolvedConfig;
  sessions: SessionRegistry;
  links: StatelessLinks;
  authenticators: Map<ServerName, ServerAuthenticator>;
  logger: Logger;
  metrics: GatewayMetrics;
  limits: RateLimits;
  basePath: string;
  /** The authorization server's issuer, when `oauth:` is configured (named in challenges). */
  issuer?: string;
  /** Each server's `access:` and `tools:`, compiled for this configuration. */
  policies: Policies;
}

export interface McpEndpoints {
  /** `handler` behind the checks, as a row's Hono handler (the server from `:server`). */
  route(handler: McpHandler): (c: Context<GatewayEnv>) => Promise<Response>;
  /** The same for the fast lane, which hands over the `:server` segment itself. */
  fast(handler: McpHandler): FastHandler;
  /** CORS preflight: allowed origins get the methods and headers, others a bare 204. */
  preflight(c: Context<GatewayEnv>): Response;
  /** 405 naming the methods the path takes. */
  notAllowed(allow: string): (c: Context<GatewayEnv>) => Response;
}

const CORS_ALLOW_HEADERS =
  "authorization, content-type, accept, mcp-session-id, mcp-protocol-version, last-event-id";

export function mcpEndpoints(deps: McpDeps): McpEndpoints {
  const { config, logger, limits } = deps;
  const origins = allowedOriginSet(config.baseUrl, config.allowedOrigins);
  const corsOrigins = new Set(config.allowedOrigins);

  /** Resolves server, origin and auth, then runs the MCP handler for this request. */
  const call = async (
    handler: McpHandler,
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

  /** Authentication, then the rate limits, then the MCP handler; CORS is the caller's. */
  const authorizedCall = async (
    request: Request,
    remoteAddress: string | undefined,
    server: ServerConfig,
    handler: McpHandler,
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
        { "www-authenticate": challenge(server, auth) },
      );
    }
    const refusal = deps.policies.get(server.name)?.refusal(auth.principal);
    if (refusal) return forbidden(request, server, auth.principal, refusal);
    const limited = rateLimited(auth.principal);
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
      clientAddress: remoteAddress,
      sessions: deps.sessions,
      links: deps.links,
      maxMessageBytes: config.limits.maxMessageBytes,
      maxStreamBufferBytes: config.limits.maxStreamBufferBytes,
      listenUris: config.limits.listenUris,
      listenUrisPerUser: config.limits.listenUrisPerUser,
      onSlowReader,
      basePath: deps.basePath,
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

  /**
   * RFC 6750 §3 with RFC 9728 §5.1: where to find how to get a token for this server; and, for
   * a server taking HTTP Basic, RFC 7617's challenge for that server alone (both when it takes
   * both).
   */
  const challenge = (server: ServerConfig, auth: { error: string; description: string }) => {
    const challenges: string[] = [];
    const bearerTokens = server.serviceAuths.some((entry) => entry.type === "bearer");
    if (deps.issuer || bearerTokens) {
      const parts = [`Bearer realm="gatehouse"`];
      if (deps.issuer) {
        parts.push(`resource_metadata="${resourceMetadataUrl(deps.issuer, server.name)}"`);
        parts.push(`scope="${DEFAULT_SCOPE}"`);
      }
      if (auth.error !== "unauthorized") {
        parts.push(`error="${auth.error}"`);
        parts.push(`error_description="${quotable(auth.description)}"`);
      }
      challenges.push(parts.join(", "));
    }
    if (server.serviceAuths.some((entry) => entry.type === "basic")) {
      challenges.push(`Basic realm="gatehouse/${server.name}", charset="UTF-8"`);
    }
    return challenges.join(", ");
  };

  /**
   * 403: the caller is who they say, but the server's `access:` does not (or no longer) admit
   * them: the configuration changed after their token was issued, or a service credential
   * lacks the groups. RFC 6750 §3.1's insufficient_scope is the error that says "valid token,
   * not enough for this resource" without asking the client to sign in again (invalid_token
   * would); no `scope` is named, since no scope would help.
   */
  const forbidden = (
    request: Request,
    server: ServerConfig,
    principal: Principal,
    refusal: string,
  ): Response => {
    deps.metrics.authRefusals.inc({ server: server.name, reason: "access_denied" });
    logger.info("request refused by the server's access rules", {
      server: server.name,
      user: principal.id,
    });
    const bearer = /^bearer /i.test(request.headers.get("authorization") ?? "");
    return httpError(
      403,
      "insufficient_scope",
      refusal,
      bearer
        ? {
          "www-authenticate":
            `Bearer realm="gatehouse", error="insufficient_scope", error_description="${
              quotable(refusal)
            }"`,
        }
        : {},
    );
  };

  /** Per person, then per client: which limit stops this caller, and for how long. */
  const rateLimited = (principal: Principal) => {
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

  return {
    route: (handler) => (c) =>
      call(handler, c.req.raw, c.req.param("server") ?? "", c.env?.remoteAddress),
    fast: (handler) => (request, server, env) => call(handler, request, server, env?.remoteAddress),
    preflight(c) {
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
    },
    notAllowed: (allow) => (c) =>
      httpError(405, "method_not_allowed", `${c.req.method} is not supported here`, { allow }),
  };
}

/** Text that fits inside a quoted-string of a challenge. */
function quotable(text: string): string {
  return text.replace(/["\\]/g, "'");
}

function addCors(response: Response, origin: string): void {
  response.headers.set("access-control-allow-origin", origin);
  response.headers.set("access-control-expose-headers", "mcp-session-id, www-authenticate");
  response.headers.append("vary", "origin");
}
