/**
 * What `gatehouse check` prints of a configuration it accepts: the servers, and what a changed
 * tool definition meets on each (tool integrity).
 */
import type { ResolvedConfig } from "../config/types.ts";
import { connectionCaps, descriptorsNeeded } from "../net/descriptors.ts";

/** The line saying the file is good, with its servers. */
export function acceptedLine(configPath: string, config: ResolvedConfig): string {
  const count = config.servers.size;
  return `${configPath}: ok (${count} server${count === 1 ? "" : "s"}: ${
    [...config.servers.keys()].join(", ")
  })`;
}

export /** `check`: what a changed tool definition meets on each server, and why (issue: tool integrity). */
function toolChangesLines(config: ResolvedConfig): string[] {
  const lines: string[] = [];
  for (const server of config.servers.values()) {
    if (server.transport === "aggregate") continue;
    const why = !server.toolChangesDefaulted
      ? "as configured"
      : server.toolChanges === "hold"
      ? "default: its host may be someone else's"
      : "default: a local or private backend";
    const pins = server.toolPins ? `, ${Object.keys(server.toolPins).length} pinned` : "";
    lines.push(`  ${server.name}: toolChanges ${server.toolChanges} (${why}${pins})`);
  }
  return lines;
}

/**
 * `check`: whose ID-JAGs the token endpoint takes. Each issuer's discovery must name a
 * `jwks_uri`; `check` reads no network, so `serve` looks at start and warns (said here).
 */
export function idJagLines(config: ResolvedConfig): string[] {
  const idJag = config.oauth?.idJag;
  if (!idJag) return [];
  const minutes = Math.round(idJag.maxLifetimeMs / 60_000);
  return [
    `  idJag: ID-JAGs of ${idJag.issuers.join(", ")} accepted (living at most ${minutes}m)`,
    "  idJag: each issuer's discovery must name a jwks_uri; check reads no network, serve looks at start and warns",
  ];
}

/**
 * `check`: the connection caps `serve` will use, out of one descriptor budget: the main port's
 * (`connections.max`, or derived from the open-file limit) and the redirect listener's.
 */
export function connectionLines(config: ResolvedConfig, openFiles: number | undefined): string[] {
  if (!config.connections.front) {
    return ["  connections: no cap (connections.front: false: Deno.serve owns the port)"];
  }
  const redirect = config.tls?.redirectHttp !== undefined;
  const caps = connectionCaps(config.connections.maxConnections, redirect, openFiles);
  const source = caps.configured
    ? "connections.max"
    : caps.openFiles === undefined
    ? "the open-file limit is unknown here: a default"
    : `derived from the open-file limit ${caps.openFiles}`;
  const lines = [
    `  connections: at most ${caps.main} on the main port (${source})` +
    (caps.redirect === undefined ? "" : `, ${caps.redirect} on tls.redirectHttp`),
  ];
  const needed = descriptorsNeeded(caps);
  if (caps.openFiles !== undefined && needed > caps.openFiles) {
    lines.push(
      `  connections: warning: these caps may hold ${needed} file descriptors (with 512 kept for backends and storage), more than the open-file limit ${caps.openFiles} here; lower connections.max or raise LimitNOFILE`,
    );
  }
  return lines;
}
