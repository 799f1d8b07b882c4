/**
 * How long a server may take to answer one request: its own `requestTimeout`, else
 * `limits.requestTimeout`. An aggregate waits as long as its slowest member may take: each
 * member's calls are bounded by that member's own value (or the aggregate's) inside it.
 */
import type { ServerName } from "../core/ids.ts";
import type { Limits, ServerConfig } from "./types.ts";

export interface RequestTimeout {
  ms: number;
  /** The setting it comes from, for the message a timed-out request gets. */
  setting: string;
}

export function requestTimeoutOf(
  server: ServerConfig,
  limits: Pick<Limits, "requestTimeoutMs">,
  servers?: ReadonlyMap<ServerName, ServerConfig>,
): RequestTimeout {
  let longest: RequestTimeout = server.requestTimeoutMs === undefined
    ? { ms: limits.requestTimeoutMs, setting: "limits.requestTimeout" }
    : { ms: server.requestTimeoutMs, setting: `servers.${server.name}.requestTimeout` };
  if (server.transport !== "aggregate" || !servers) return longest;
  for (const name of server.members) {
    const ms = servers.get(name)?.requestTimeoutMs;
    if (ms !== undefined && ms > longest.ms) {
      longest = { ms, setting: `servers.${name}.requestTimeout` };
    }
  }
  return longest;
}
