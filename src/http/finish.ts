/**
 * The request finishing every request gets, whichever lane served it: request id, security
 * headers, access log, metrics, and the 500 for an error no handler caught.
 */
import { getPath } from "hono/utils/url";
import { randomHex } from "../crypto/random.ts";
import { httpError } from "../mcp/front/http_util.ts";
import { StorageUnavailableError } from "../store/store.ts";
import type { Logger } from "../observability/logger.ts";
import type { GatewayMetrics } from "../observability/metrics.ts";
import { nameHttpSpan, noteOnHttpSpan, TRACING } from "../observability/tracing.ts";
import { httpRoute } from "./trace_route.ts";

export type GatewayEnv = {
  Bindings: { remoteAddress?: string };
};

const SANE_REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
/**
 * Request ids only correlate log lines, so they need to be unique, not unpredictable: a
 * random prefix per process (replicas differ) and a counter, instead of random bytes per request.
 */
const REQUEST_ID_PREFIX = randomHex(4);
let requestCount = 0;

/** The caller's request id if it is a sane one, else a new one. */
export function requestIdFor(incoming: string | null | undefined): string {
  return incoming && SANE_REQUEST_ID.test(incoming)
    ? incoming
    : `${REQUEST_ID_PREFIX}-${(++requestCount).toString(36)}`;
}

export function addSecurityHeaders(h: Headers): void {
  h.set("x-content-type-options", "nosniff");
  h.set("referrer-policy", "no-referrer");
  h.set("x-frame-options", "DENY");
  if (!h.has("content-security-policy")) {
    h.set("content-security-policy", "default-src 'none'; frame-ancestors 'none'");
  }
}

/** Where every request is accounted for: the access log and the HTTP metrics. */
export interface RequestAccounting {
  logger: Logger;
  metrics: GatewayMetrics;
  basePath: string;
}

/** Serves one request; `path` is the request's path as Hono's router sees it. */
export type Lane = (
  request: Request,
  env: GatewayEnv["Bindings"] | undefined,
  path: string,
) => Response | Promise<Response>;

/**
 * The gateway's one `fetch`: `lane` serves the request, then the response is finished here
 * and nowhere else. An error no handler caught is logged with the request id and becomes the
 * 500 JSON, so a client never sees a stack trace.
 */
export function finished(
  accounting: RequestAccounting,
  lane: Lane,
): (request: Request, env?: GatewayEnv["Bindings"]) => Promise<Response> {
  return async (request, env) => {
    const started = performance.now();
    const id = requestIdFor(request.headers.get("x-request-id"));
    // Hono's own reading of the path (decoded as its router decodes it), for the log line.
    const path = getPath(request);
    let response: Response;
    try {
      response = await lane(request, env, path);
    } catch (error) {
      if (error instanceof StorageUnavailableError) {
        // Said once a second by the storage monitor, not once per request.
        response = httpError(
          503,
          "temporarily_unavailable",
          "the gateway's storage cannot be reached now; try again shortly",
          { "retry-after": String(error.retryAfter) },
        );
      } else {
        accounting.logger.error("unhandled error", { requestId: id, error });
        response = httpError(500, "server_error", "the gateway failed to handle this request");
      }
    }
    const client = env?.remoteAddress;
    finishRequest(accounting, { id, method: request.method, path, started, client }, response);
    return response;
  };
}

/**
 * What every response gets once its handler is done: security headers, its request id, one
 * access line (never the query string, never a header value) and its metrics.
 */
function finishRequest(
  accounting: RequestAccounting,
  request: { id: string; method: string; path: string; started: number; client?: string },
  response: Response,
): void {
  addSecurityHeaders(response.headers);
  const kind = endpointKind(request.path, accounting.basePath);
  // Tracing hook: Deno's server span named after the route (`POST /token`), and the client as
  // trustedProxies resolve it (Deno's own span sees only the unix socket behind the front).
  if (TRACING) {
    nameHttpSpan(
      request.method,
      httpRoute(request.path, accounting.basePath, kind, response.status),
    );
    if (request.client) noteOnHttpSpan("client.address", request.client);
  }
  const ms = performance.now() - request.started;
  accounting.metrics.httpRequests.inc({ kind, status: String(response.status) });
  accounting.metrics.httpDuration.observe(ms / 1000, { kind });
  accounting.logger.info("request", {
    requestId: request.id,
    method: request.method,
    path: request.path,
    status: response.status,
    ...(request.client !== undefined && { client: request.client }),
    ms: Math.round(ms * 10) / 10,
  });
  response.headers.set("x-request-id", request.id);
}

/** What kind of endpoint a path is, for metrics: a small closed set. */
export function endpointKind(path: string, basePath: string): string {
  const rest = path.startsWith(basePath) ? path.slice(basePath.length) : path;
  const mcp = /^\/[^/]+\/(mcp|sse|message)$/.exec(rest);
  if (mcp) return mcp[1];
  if (rest.startsWith("/my/")) return "page";
  if (rest === "/health" || rest === "/ready" || rest === "/metrics") return rest.slice(1);
  if (
    /^\/(authorize|token|register|clients|oauth|logout)(\/|$)/.test(rest) ||
    path.startsWith("/.well-known/")
  ) return "oauth";
  return "other";
}
