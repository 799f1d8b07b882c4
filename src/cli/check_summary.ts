/**
 * What `gatehouse check` prints of a configuration it accepts: the servers, and what a changed
 * tool definition meets on each (tool integrity).
 */
import type { ResolvedConfig } from "../config/types.ts";

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
