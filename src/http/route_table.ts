/**
 * How the route table in routes.ts is written, and what it compiles to: Hono's router for
 * every row, and the fast lane for the one row that has one.
 */
import type { Handler, Hono, MiddlewareHandler, NotFoundHandler } from "hono";
import type { GatewayEnv } from "./finish.ts";

export type Method = "GET" | "POST" | "DELETE" | "OPTIONS" | "ALL";
export type Bindings = GatewayEnv["Bindings"];

/** Serves a request outside Hono: the request, its `:server` segment, the bindings. */
export type FastHandler = (
  request: Request,
  server: string,
  env: Bindings | undefined,
) => Promise<Response>;

export type Route =
  | { use: string; middleware: MiddlewareHandler<GatewayEnv>; origin?: true }
  | {
    method: Method;
    path: string;
    handler: Handler<GatewayEnv>;
    /** At the origin's root rather than under the base path. */
    origin?: true;
    /** Also served without Hono's router; the path must hold one `:server` segment. */
    fast?: FastHandler;
  }
  | { otherwise: NotFoundHandler<GatewayEnv> };

export function route(
  method: Method,
  path: string,
  handler: Handler<GatewayEnv>,
  fast?: FastHandler,
): Route {
  return fast ? { method, path, handler, fast } : { method, path, handler };
}

export const get = (path: string, handler: Handler<GatewayEnv>) => route("GET", path, handler);
export const post = (path: string, handler: Handler<GatewayEnv>) => route("POST", path, handler);
export const options = (path: string, handler: Handler<GatewayEnv>) =>
  route("OPTIONS", path, handler);
/** Every method, including those a row above does not take. */
export const all = (path: string, handler: Handler<GatewayEnv>) => route("ALL", path, handler);
/** Runs before the rows below it that match the path; a wildcard matches its bare prefix too. */
export const use = (path: string, middleware: MiddlewareHandler<GatewayEnv>): Route => ({
  use: path,
  middleware,
});
/** A row at the origin's root, outside the base path (RFC 8414 and RFC 9728 metadata). */
export const atOrigin = (row: Route): Route => ({ ...row, origin: true }) as Route;
/** What answers a request no row answered. */
export const otherwise = (handler: NotFoundHandler<GatewayEnv>): Route => ({ otherwise: handler });

/** The fast lane: the one row served before (and without) Hono's router. */
export interface FastLane {
  method: string;
  /** The `:server` segment when `path` is this row's, else undefined. */
  match(path: string): string | undefined;
  serve: FastHandler;
}

/**
 * Registers every row in order: for one request Hono runs the matching rows top to bottom, so
 * a middleware row runs before the rows below it. `app` is `root` under the base path.
 */
export function compileRoutes(
  root: Hono<GatewayEnv>,
  app: Hono<GatewayEnv>,
  rows: Route[],
  basePath: string,
): FastLane | undefined {
  let fast: FastLane | undefined;
  for (const row of rows) {
    if ("otherwise" in row) {
      root.notFound(row.otherwise);
      continue;
    }
    const at = row.origin ? root : app;
    if ("use" in row) {
      at.use(row.use, row.middleware);
      continue;
    }
    if (row.method === "ALL") at.all(row.path, row.handler);
    else at.on(row.method, row.path, row.handler);
    if (row.fast) {
      if (fast) throw new Error(`the route table has two fast lanes: keep one (${row.path})`);
      fast = fastLane(row.method, (row.origin ? "" : basePath) + row.path, row.fast);
    }
  }
  return fast;
}

/**
 * Matches without a regular expression or a router: a prefix, one segment, a suffix. A segment
 * holding `%` is left to Hono, which decodes it.
 */
function fastLane(method: string, path: string, serve: FastHandler): FastLane {
  const at = path.indexOf(":server");
  if (at < 0 || path.indexOf(":", at + 1) >= 0) {
    throw new Error(`a fast-lane path needs exactly one :server segment, not ${path}`);
  }
  const prefix = path.slice(0, at);
  const suffix = path.slice(at + ":server".length);
  const shortest = prefix.length + suffix.length + 1;
  return {
    method,
    match(candidate) {
      if (
        candidate.length < shortest || !candidate.startsWith(prefix) ||
        !candidate.endsWith(suffix)
      ) return undefined;
      const server = candidate.slice(prefix.length, candidate.length - suffix.length);
      return server.includes("/") || server.includes("%") ? undefined : server;
    },
    serve,
  };
}
