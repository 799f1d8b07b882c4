/**
 * The `servers:` mapping: each entry's name, transport and the keys every kind shares (public,
 * serviceAuths, access, tools, requestTimeout, description), and whether anyone may reach it
 * unauthenticated; then the entry is handed to its kind (server_backends.ts,
 * server_aggregate.ts).
 */
import { isValidServerName, type ServerName } from "../core/ids.ts";
import { Checker, closest, describe, type Dict } from "./checker.ts";
import type { ConfigPath } from "./issues.ts";
import { AGGREGATE_KEYS, checkAggregates, parseAggregate } from "./server_aggregate.ts";
import { checkAccessSources, parseAccess, parseToolPolicy } from "./server_access.ts";
import {
  HTTP_KEYS,
  parseBackendCommon,
  parseHttp,
  parseStdio,
  STDIO_KEYS,
  type Substitution,
} from "./server_backends.ts";
import { parseServiceAuths } from "./service_auths.ts";
import { parseApprovals } from "./server_approvals.ts";
import type { HttpServerConfig, ServerConfig } from "./types.ts";

const COMMON_SERVER_KEYS = [
  "transport",
  "public",
  "serviceAuths",
  "access",
  "tools",
  "approvals",
  "requestTimeout",
  "description",
];
/** Each kind's keys, in the order the hint for an unknown key lists them. */
const KEYS_BY_TRANSPORT: Record<string, string[]> = {
  stdio: [...COMMON_SERVER_KEYS, ...STDIO_KEYS],
  "streamable-http": [...COMMON_SERVER_KEYS, ...HTTP_KEYS],
  sse: [...COMMON_SERVER_KEYS, ...HTTP_KEYS],
  aggregate: [...COMMON_SERVER_KEYS, ...AGGREGATE_KEYS],
};
const TRANSPORTS = Object.keys(KEYS_BY_TRANSPORT);
const ALL_SERVER_KEYS = [...new Set(Object.values(KEYS_BY_TRANSPORT).flat())];

/** What a server's validation needs from the rest of the document and from loading. */
export interface ServerContext {
  oauthConfigured: boolean;
  /** The `${VAR}` values loading put into the document. */
  substitutions: Substitution[];
  /** People bring groups at sign-in: provider github, or an oidc/azure `groupsClaim`. */
  groupsAtSignIn?: boolean;
  /** GitHub's groups arrive lower-cased, so the configuration's are compared lower-cased. */
  lowerCaseGroups?: boolean;
}

/** Every server under `servers:`, by name; aggregates' members resolved and checked. */
export function parseServers(
  c: Checker,
  value: unknown,
  context: ServerContext,
): Map<ServerName, ServerConfig> {
  const servers = new Map<ServerName, ServerConfig>();
  const rawServers = c.object(value, ["servers"], "any");
  if (rawServers) {
    if (Object.keys(rawServers).length === 0) {
      c.fail(["servers"], "no servers are configured", "add at least one under servers:");
    }
    for (const [name, entry] of Object.entries(rawServers)) {
      const server = parseServer(c, name, entry, context);
      if (server) servers.set(server.name, server);
    }
  }
  checkAggregates(c, servers, rawServers ?? {});
  checkAccessSources(c, servers, { atSignIn: context.groupsAtSignIn ?? false });
  return servers;
}

function parseServer(
  c: Checker,
  name: string,
  value: unknown,
  context: ServerContext,
): ServerConfig | undefined {
  const path: ConfigPath = ["servers", name];
  if (!isValidServerName(name)) {
    c.fail(
      path,
      `invalid server name "${name}"`,
      "use lower-case letters, digits, '-' and '_' (it becomes the URL path /NAME/mcp)",
    );
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return c.fail(path, `expected a mapping, got ${describe(value)}`);
  }
  const transport = checkTransport(c, path, value as Dict);
  const raw = c.object(value, path, transport ? KEYS_BY_TRANSPORT[transport] : ALL_SERVER_KEYS)!;
  const spelling = { lowerCase: context.lowerCaseGroups ?? false };
  const access = parseAccess(c, raw.access, [...path, "access"], spelling);
  const tools = parseToolPolicy(c, raw.tools, [...path, "tools"], spelling);
  const approvals = parseApprovals(
    c,
    raw.approvals,
    [...path, "approvals"],
    spelling,
    context.oauthConfigured,
  );
  const common = {
    name: name as ServerName,
    public: c.boolean(raw.public, [...path, "public"], false),
    serviceAuths: parseServiceAuths(c, raw.serviceAuths, [...path, "serviceAuths"], spelling),
    // Left out when not given, so that a server without them compares equal to before.
    ...(access && { access }),
    ...(tools && { tools }),
    ...(approvals && { approvals }),
    ...(raw.requestTimeout !== undefined && {
      requestTimeoutMs: c.duration(raw.requestTimeout, [...path, "requestTimeout"], 1),
    }),
  };
  if (!common.public && common.serviceAuths.length === 0 && !context.oauthConfigured) {
    c.fail(
      path,
      "has no authentication",
      "configure oauth:, add serviceAuths: [{ type: bearer, tokens: [...] }], or say public: true to serve it to anyone",
    );
  }
  if (common.public && common.serviceAuths.length > 0) {
    c.fail([...path, "public"], "a public server cannot also have serviceAuths", "pick one");
  }
  if (raw.description !== undefined) c.optionalString(raw.description, [...path, "description"]);

  // Without a kind, only the keys every server has could be checked.
  if (transport === undefined) return undefined;
  if (transport === "aggregate") return parseAggregate(c, path, raw, common);
  const backend = parseBackendCommon(c, path, raw, common, context.substitutions);
  if (transport === "stdio") return parseStdio(c, path, raw, backend, context.oauthConfigured);
  const http = { ...backend, transport: transport as HttpServerConfig["transport"] };
  return parseHttp(c, path, raw, http, context.oauthConfigured, spelling);
}

/**
 * The entry's transport. A missing or unknown one is reported, and the kind the other keys point
 * to is returned anyway (a command: is stdio, a url: HTTP, a servers: list an aggregate), so
 * that the rest of the entry is checked in the same run instead of after the transport is fixed.
 */
function checkTransport(c: Checker, path: ConfigPath, entry: Dict): string | undefined {
  const transport = entry.transport;
  if (typeof transport === "string" && TRANSPORTS.includes(transport)) return transport;
  const spelt = typeof transport === "string" ? closest(transport, TRANSPORTS) : undefined;
  const likely = entry.command !== undefined
    ? "stdio"
    : entry.url !== undefined
    ? (spelt === "sse" ? "sse" : "streamable-http")
    : entry.servers !== undefined
    ? "aggregate"
    : spelt;
  c.fail(
    [...path, "transport"],
    transport === undefined ? "is required" : `unknown transport ${describe(transport)}`,
    `one of: ${TRANSPORTS.join(", ")}${likely ? `; this entry looks like ${likely}` : ""}`,
  );
  return likely;
}
