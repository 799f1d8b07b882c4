/**
 * Aggregate servers: one endpoint combining member servers. Checks the aggregate's own keys
 * (members, delimiter, cache lifetime), then, once every server is known, that its members
 * exist, are not aggregates, and split from their tools' names one way only.
 */
import type { ServerName } from "../core/ids.ts";
import type { Checker, Dict } from "./checker.ts";
import type { ConfigPath } from "./issues.ts";
import { USER_TOKEN_KEYS } from "./server_backends.ts";
import type { AggregateServerConfig, ServerConfig } from "./types.ts";

/** The keys an aggregate has besides those every server has. */
export const AGGREGATE_KEYS = ["servers", "delimiter", "cacheTtl"];
const DEFAULT_CACHE_TTL_MS = 60_000;

type Common = Pick<
  AggregateServerConfig,
  "name" | "public" | "serviceAuths" | "access" | "tools" | "requestTimeoutMs"
>;

export function parseAggregate(
  c: Checker,
  path: ConfigPath,
  raw: Dict,
  common: Common,
): AggregateServerConfig {
  for (const key of USER_TOKEN_KEYS) {
    if (raw[key] !== undefined) {
      c.fail(
        [...path, key],
        "is set on the members of an aggregate, not on the aggregate",
        "move it to the member servers that need a person's credential",
      );
    }
  }
  const tools = raw.tools as Dict | undefined;
  if (raw.toolChanges !== undefined || (tools && typeof tools === "object" && tools.pinned)) {
    c.fail(
      [...path, raw.toolChanges !== undefined ? "toolChanges" : "tools"],
      "toolChanges and tools.pinned are set on the members of an aggregate, not on the aggregate",
      "set them on each member server: a member's tool changes are held by its own setting",
    );
  }
  const delimiter = raw.delimiter === undefined
    ? "."
    : c.string(raw.delimiter, [...path, "delimiter"]) ?? ".";
  if (!/^[A-Za-z0-9_.-]{1,3}$/.test(delimiter)) {
    c.fail(
      [...path, "delimiter"],
      `"${delimiter}" cannot separate member and tool names`,
      "use 1 to 3 characters from A-Z a-z 0-9 _ . - (tool names allow only those)",
    );
  }
  const server: AggregateServerConfig = {
    ...common,
    transport: "aggregate",
    // Without a list: every non-aggregate server, filled in by checkAggregates.
    members: raw.servers === undefined
      ? []
      : c.stringList(raw.servers, [...path, "servers"]) as ServerName[],
    delimiter,
    cacheTtlMs: c.duration(raw.cacheTtl, [...path, "cacheTtl"], DEFAULT_CACHE_TTL_MS),
  };
  if (raw.servers !== undefined && server.members.length === 0) {
    c.fail(
      [...path, "servers"],
      "lists no members",
      "name the servers to combine, or omit it for all",
    );
  }
  (server as AggregateServerConfig & { membersGiven: boolean }).membersGiven =
    raw.servers !== undefined;
  return server;
}

/** Members exist, are not aggregates, and their names cannot be confused with the delimiter. */
export function checkAggregates(
  c: Checker,
  servers: Map<ServerName, ServerConfig>,
  raw: Dict,
): void {
  for (const server of servers.values()) {
    if (server.transport !== "aggregate") continue;
    if ((raw[server.name] as Dict).servers === undefined) {
      server.members = [...servers.values()]
        .filter((s) => s.transport !== "aggregate").map((s) => s.name);
    }
    const path: ConfigPath = ["servers", server.name, "servers"];
    server.members.forEach((member, i) => {
      const target = servers.get(member);
      if (!target) {
        const known = [...servers.keys()].filter((n) => n !== server.name);
        c.fail([...path, i], `no server named "${member}"`, `configured: ${known.join(", ")}`);
      } else if (target.transport === "aggregate") {
        c.fail([...path, i], `"${member}" is an aggregate itself`, "aggregates cannot be nested");
      } else if (member.includes(server.delimiter)) {
        c.fail(
          [...path, i],
          `the name "${member}" contains the delimiter "${server.delimiter}"`,
          "rename the server or choose another delimiter, so member.tool splits one way only",
        );
      }
    });
    if (new Set(server.members).size !== server.members.length) {
      c.fail(path, "names a member twice");
    }
    if (server.members.length === 0) {
      c.fail(["servers", server.name], "has no members", "configure the servers it combines");
    }
  }
}
