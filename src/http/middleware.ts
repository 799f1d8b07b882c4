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

/**
 * What every response gets once its handler is done: security headers, its request id, one
 * access line (never the query string, never a header value) and its metrics.
 */
export function finishRequest(
  accounting: RequestAccounting,
  request: { id: string; method: string; path: string; started: number },
  response: Response,
): void {
  addSecurityHeaders(response.headers);
  const kind = endpointKind(request.path, accounting.basePath);
  const ms = performance.now() - request.started;
  accounting.metrics.httpRequests.inc({ kind, status: String(response.status) });
  accounting.metrics.httpDuration.observe(ms / 1000, { kind });
  accounting.logger.info("request", {
    requestId: request.id,
    method: request.method,
    path: request.path,
    status: response.status,
    ms: Math.round(ms * 10) / 10,
  });
  response.headers.set("x-request-id", request.id);
}

/** Request id, security headers, access log and metrics, as one Hono middleware. */
export function bookkeeping(accounting: RequestAccounting): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    const started = performance.now();
    const id = requestIdFor(c.req.header("x-request-id"));
    c.set("requestId", id);
    await next();
    finishRequest(accounting, { id, method: c.req.method, path: c.req.path, started }, c.res);
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
