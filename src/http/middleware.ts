/** Cross-cutting HTTP middleware: request id, security headers, access log. */
import type { MiddlewareHandler } from "hono";
import { randomHex } from "../crypto/random.ts";
import type { Logger } from "../observability/logger.ts";
import type { GatewayMetrics } from "../observability/metrics.ts";

export type GatewayEnv = {
  Bindings: { remoteAddress?: string };
  Variables: { requestId: string };
};

const SANE_REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
/**
 * Request ids only correlate log lines, so they need to be unique, not unpredictable: a
 * random prefix per process (replicas differ) and a counter, instead of random bytes per request.
 */
const REQUEST_ID_PREFIX = randomHex(4);
let requestCount = 0;

export function requestId(): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    const incoming = c.req.header("x-request-id");
    const id = incoming && SANE_REQUEST_ID.test(incoming)
      ? incoming
      : `${REQUEST_ID_PREFIX}-${(++requestCount).toString(36)}`;
    c.set("requestId", id);
    await next();
    c.res.headers.set("x-request-id", id);
  };
}

export function securityHeaders(): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    await next();
    const h = c.res.headers;
    h.set("x-content-type-options", "nosniff");
    h.set("referrer-policy", "no-referrer");
    h.set("x-frame-options", "DENY");
    if (!h.has("content-security-policy")) {
      h.set("content-security-policy", "default-src 'none'; frame-ancestors 'none'");
    }
  };
}

/** What kind of endpoint a path is, for metrics: a small closed set. */
export function endpointKind(path: string, basePath: string): string {
  const rest = path.startsWith(basePath) ? path.slice(basePath.length) : path;
  const mcp = /^\/[^/]+\/(mcp|sse|message)$/.exec(rest);
  if (mcp) return mcp[1];
  if (rest.startsWith("/my/")) return "page";
  if (rest === "/health" || rest === "/metrics") return rest.slice(1);
  if (
    /^\/(authorize|token|register|clients|oauth|logout)(\/|$)/.test(rest) ||
    path.startsWith("/.well-known/")
  ) return "oauth";
  return "other";
}

/** One line per request (never the query string, never a header value), and its metrics. */
export function accessLog(
  logger: Logger,
  metrics: GatewayMetrics,
  basePath: string,
): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    const started = performance.now();
    await next();
    const kind = endpointKind(c.req.path, basePath);
    metrics.httpRequests.inc({ kind, status: String(c.res.status) });
    metrics.httpDuration.observe((performance.now() - started) / 1000, { kind });
    logger.info("request", {
      requestId: c.get("requestId"),
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
    });
  };
}
