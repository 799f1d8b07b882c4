/**
 * The `connections:` section: what the TCP front (src/net/tcp_front.ts) allows a client
 * connection. The defaults close a connection that sends its head or body too slowly, sits
 * idle, or stops reading; the cap on connections, left out, follows the file descriptors the
 * process may open (src/net/tcp_front.ts `defaultMaxConnections`).
 */
import type { Checker } from "./checker.ts";
import type { ConnectionLimits } from "./types.ts";

export const DEFAULT_CONNECTION_TIMEOUTS = {
  headerTimeoutMs: 10_000,
  bodyTimeoutMs: 30_000,
  idleTimeoutMs: 75_000,
  sendTimeoutMs: 60_000,
};

export function parseConnections(
  c: Checker,
  value: unknown,
  /** The longest request timeout: `limits.requestTimeout` or a server's own. */
  requestTimeoutMs: number,
): ConnectionLimits {
  const raw = c.object(value, ["connections"], [
    "max",
    "headerTimeout",
    "bodyTimeout",
    "idleTimeout",
    "sendTimeout",
    "front",
  ]) ?? {};
  const at = (key: string) => ["connections", key];
  const limits: ConnectionLimits = {
    // Left out: the front sizes it from the process's open-file limit when it starts.
    maxConnections: raw.max === undefined ? undefined : c.positiveInteger(raw.max, at("max"), 1),
    headerTimeoutMs: c.duration(
      raw.headerTimeout,
      at("headerTimeout"),
      DEFAULT_CONNECTION_TIMEOUTS.headerTimeoutMs,
    ),
    bodyTimeoutMs: c.duration(
      raw.bodyTimeout,
      at("bodyTimeout"),
      DEFAULT_CONNECTION_TIMEOUTS.bodyTimeoutMs,
    ),
    idleTimeoutMs: c.duration(
      raw.idleTimeout,
      at("idleTimeout"),
      Math.max(DEFAULT_CONNECTION_TIMEOUTS.idleTimeoutMs, requestTimeoutMs + 15_000),
    ),
    sendTimeoutMs: c.duration(
      raw.sendTimeout,
      at("sendTimeout"),
      DEFAULT_CONNECTION_TIMEOUTS.sendTimeoutMs,
    ),
    front: c.boolean(raw.front, at("front"), true),
  };
  if (!limits.front) {
    c.warn(
      at("front"),
      "without the front, Deno.serve owns the port: no headerTimeout, bodyTimeout, idleTimeout or sendTimeout, no connection cap (connections.max) and no refusal of ambiguous request framing",
      "only behind a proxy that enforces its own timeouts and connection cap, with its address in trustedProxies",
    );
  }
  // A client that asked for JSON waits for its answer without a byte either way.
  if (raw.idleTimeout !== undefined && limits.idleTimeoutMs <= requestTimeoutMs) {
    c.fail(
      at("idleTimeout"),
      "must be longer than the longest request timeout (limits.requestTimeout, or a server's requestTimeout), or a client waiting for a slow answer is cut",
      "raise it, or leave it out (it then follows the longest request timeout)",
    );
  }
  return limits;
}
