/**
 * Turns the parsed YAML (`unknown`, `${ENV}` already substituted) into a `ResolvedConfig`,
 * collecting every problem with its path and a hint instead of stopping at the first.
 */
import { isValidServerName, type ServerName } from "../core/ids.ts";
import { isLoopbackHttp } from "../core/loopback.ts";
import { Secret } from "../core/secret.ts";
import type { ConfigIssue, ConfigPath } from "./issues.ts";
import { Checker, describe, type Dict } from "./checker.ts";
import { parseOAuth } from "./oauth.ts";
import { parseConnections } from "./connections.ts";
import { parseRateLimits } from "./rate_limits.ts";
import { parseUserToken } from "./user_token.ts";
import type {
  AggregateServerConfig,
  HttpServerConfig,
  Limits,
  LogLevel,
  ResolvedConfig,
  ServerConfig,
  ServiceAuth,
  StdioServerConfig,
} from "./types.ts";

export const DEFAULT_LIMITS: Limits = {
  sessionsPerUser: 10,
  maxSessions: 1_000,
  sessionIdleTimeoutMs: 5 * 60_000,
  requestTimeoutMs: 60_000,
  maxMessageBytes: 4 * 1_048_576,
  maxStreamBufferBytes: 8 * 1_048_576,
};
const DEFAULT_LISTEN = "127.0.0.1:8080";
const DEFAULT_STORAGE = "./data/gatehouse.kv";
const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;
const MIN_SECRET_BYTES = 32;

const TOP_KEYS = [
  "$schema",
  "listen",
  "baseUrl",
  "storage",
  "secret",
  "allowedOrigins",
  "limits",
  "connections",
  "shutdownGrace",
  "logLevel",
  "servers",
  "previousSecrets",
  "oauth",
  "rateLimits",
  "audit",
  "metrics",
  "replicaId",
];
const LIMIT_KEYS = [
  "sessionsPerUser",
  "maxSessions",
  "sessionIdleTimeout",
  "requestTimeout",
  "maxMessageBytes",
  "maxStreamBuffer",
];
const COMMON_SERVER_KEYS = ["transport", "public", "serviceAuths", "description"];
const USER_TOKEN_KEYS = ["requiresUserToken", "userToken"];
const BACKEND_KEYS = [...COMMON_SERVER_KEYS, ...USER_TOKEN_KEYS, "forwardRoots"];
const STDIO_KEYS = [...BACKEND_KEYS, "command", "args", "env", "cwd"];
const AGGREGATE_KEYS = [...COMMON_SERVER_KEYS, "servers", "delimiter", "cacheTtl"];
const DEFAULT_CACHE_TTL_MS = 60_000;
const HTTP_KEYS = [...BACKEND_KEYS, "url", "headers"];
/** Where a server's configuration reaches its backend. */
const BACKEND_INPUTS = new Set<unknown>(["args", "env", "url", "headers"]);
const TRANSPORTS = ["stdio", "streamable-http", "sse", "aggregate"];
const PLACEHOLDER = /\{\{\s*([^}]*?)\s*\}\}/g;

function parseListen(
  c: Checker,
  value: unknown,
  path: ConfigPath = ["listen"],
): { hostname: string; port: number } {
  const text = value === undefined ? DEFAULT_LISTEN : String(value);
  const match = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(text);
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65535) {
    c.fail(path, `expected host:port, got ${describe(value)}`, 'write e.g. "127.0.0.1:8080"');
    return { hostname: "127.0.0.1", port: 8080 };
  }
  return { hostname: match[1].replace(/^\[|\]$/g, ""), port };
}

function parseBaseUrl(c: Checker, value: unknown, listen: { hostname: string; port: number }) {
  if (value === undefined) {
    const host = listen.hostname === "0.0.0.0" || listen.hostname === "::"
      ? "localhost"
      : listen.hostname;
    return `http://${host.includes(":") ? `[${host}]` : host}:${listen.port}`;
  }
  const text = c.string(value, ["baseUrl"]);
  if (text === undefined) return "http://localhost:8080";
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    c.fail(["baseUrl"], `not a URL: ${describe(text)}`, 'write e.g. "https://mcp.example.com"');
    return text;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    c.fail(["baseUrl"], "must be an http or https URL");
  }
  if (url.search || url.hash) {
    c.fail(["baseUrl"], "must not have a query or fragment", "the public URL of the gateway only");
  }
  return url.origin + url.pathname.replace(/\/+$/, "");
}

function parseOrigins(c: Checker, value: unknown): string[] {
  return c.stringList(value, ["allowedOrigins"]).flatMap((text, i) => {
    try {
      const url = new URL(text);
      if (url.origin !== "null" && url.pathname === "/" && !url.search) return [url.origin];
    } catch { /* reported below */ }
    c.fail(
      ["allowedOrigins", i],
      `not an origin: ${describe(text)}`,
      'an origin is scheme://host[:port], e.g. "https://app.example.com"',
    );
    return [];
  });
}

/** Session ids carry it, so it is kept short and URL- and header-safe. */
function parseReplicaId(c: Checker, value: unknown): string | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  const id = c.string(value, ["replicaId"]);
  if (id !== undefined && !/^[a-z0-9-]{1,32}$/.test(id)) {
    c.fail(
      ["replicaId"],
      `not a replica id: ${describe(id)}`,
      "use up to 32 lower-case letters, digits and '-', e.g. gw-1",
    );
    return undefined;
  }
  return id;
}

function parseLimits(c: Checker, value: unknown): Limits {
  const raw = c.object(value, ["limits"], LIMIT_KEYS) ?? {};
  const at = (key: string): ConfigPath => ["limits", key];
  const maxMessageBytes = c.size(
    raw.maxMessageBytes,
    at("maxMessageBytes"),
    DEFAULT_LIMITS.maxMessageBytes,
  );
  // A stream keeps half its buffer to replay from, and that half must hold any one message.
  const smallestBuffer = 2 * maxMessageBytes;
  const maxStreamBufferBytes = c.size(
    raw.maxStreamBuffer,
    at("maxStreamBuffer"),
    Math.max(DEFAULT_LIMITS.maxStreamBufferBytes, smallestBuffer),
  );
  if (maxStreamBufferBytes < smallestBuffer) {
    c.fail(
      at("maxStreamBuffer"),
      `must be at least twice limits.maxMessageBytes (${smallestBuffer} bytes)`,
      "raise it, or leave it out to get the smallest that fits",
    );
  }
  return {
    sessionsPerUser: c.positiveInteger(
      raw.sessionsPerUser,
      at("sessionsPerUser"),
      DEFAULT_LIMITS.sessionsPerUser,
    ),
    maxSessions: c.positiveInteger(raw.maxSessions, at("maxSessions"), DEFAULT_LIMITS.maxSessions),
    sessionIdleTimeoutMs: c.duration(
      raw.sessionIdleTimeout,
      at("sessionIdleTimeout"),
      DEFAULT_LIMITS.sessionIdleTimeoutMs,
    ),
    requestTimeoutMs: c.duration(
      raw.requestTimeout,
      at("requestTimeout"),
      DEFAULT_LIMITS.requestTimeoutMs,
    ),
    maxMessageBytes,
    maxStreamBufferBytes,
  };
}

function parseServiceAuths(c: Checker, value: unknown, path: ConfigPath): ServiceAuth[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    c.fail(
      path,
      `expected a list, got ${describe(value)}`,
      "write [{ type: bearer, tokens: [...] }]",
    );
    return [];
  }
  const auths: ServiceAuth[] = [];
  value.forEach((item, i) => {
    const at = [...path, i];
    const raw = c.object(item, at, ["type", "tokens"]);
    if (!raw) return;
    if (raw.type !== "bearer") {
      c.fail([...at, "type"], `unsupported auth type ${describe(raw.type)}`, 'use "bearer"');
      return;
    }
    const tokens = c.stringList(raw.tokens, [...at, "tokens"]);
    if (tokens.length === 0) {
      c.fail([...at, "tokens"], "needs at least one token", 'e.g. tokens: ["${MY_TOKEN}"]');
    }
    tokens.forEach((token, j) => {
      if (token.trim() !== token || token.length === 0) {
        c.fail([...at, "tokens", j], "a token must be non-empty, without surrounding spaces");
      }
    });
    auths.push({ type: "bearer", tokens: tokens.map((t) => new Secret(t)) });
  });
  return auths;
}

/** A value `${VAR}` put into the document when it was loaded, and where. */
export interface Substitution {
  path: ConfigPath;
  value: string;
}

/** The `${VAR}` values in what the server at `path` hands its backend: secrets, as a rule. */
function substitutedSecrets(substitutions: Substitution[], path: ConfigPath): Secret[] {
  return substitutions
    .filter(({ path: at }) => at[0] === path[0] && at[1] === path[1] && BACKEND_INPUTS.has(at[2]))
    .map(({ value }) => new Secret(value));
}

function parseServer(
  c: Checker,
  name: string,
  value: unknown,
  oauthConfigured: boolean,
  substitutions: Substitution[],
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
  const transport = (value as Dict).transport;
  if (typeof transport !== "string" || !TRANSPORTS.includes(transport)) {
    return c.fail(
      [...path, "transport"],
      transport === undefined ? "is required" : `unknown transport ${describe(transport)}`,
      `one of: ${TRANSPORTS.join(", ")}`,
    );
  }
  const raw = c.object(
    value,
    path,
    transport === "stdio" ? STDIO_KEYS : transport === "aggregate" ? AGGREGATE_KEYS : HTTP_KEYS,
  )!;
  const common = {
    name: name as ServerName,
    public: c.boolean(raw.public, [...path, "public"], false),
    serviceAuths: parseServiceAuths(c, raw.serviceAuths, [...path, "serviceAuths"]),
  };
  if (!common.public && common.serviceAuths.length === 0 && !oauthConfigured) {
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

  if (transport === "aggregate") {
    for (const key of USER_TOKEN_KEYS) {
      if (raw[key] !== undefined) {
        c.fail(
          [...path, key],
          "is set on the members of an aggregate, not on the aggregate",
          "move it to the member servers that need a person's credential",
        );
      }
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

  const backend = {
    ...common,
    forwardRoots: c.boolean(raw.forwardRoots, [...path, "forwardRoots"], true),
    secretValues: substitutedSecrets(substitutions, path),
  };
  if (transport === "stdio") {
    const server: StdioServerConfig = {
      ...backend,
      transport,
      command: c.string(raw.command, [...path, "command"], "the program to start, e.g. npx") ?? "",
      args: c.stringList(raw.args, [...path, "args"]),
      env: c.stringMap(raw.env, [...path, "env"]),
      cwd: c.optionalString(raw.cwd, [...path, "cwd"]),
    };
    server.args.forEach((arg, i) => {
      c.placeholders(arg, [...path, "args", i]);
      if (passesUserToken(arg)) {
        c.warn(
          [...path, "args", i],
          "puts the person's token on the backend's command line",
          "pass it in env: instead; args are visible to every local user in ps",
        );
      }
    });
    for (const [key, text] of Object.entries(server.env)) {
      c.placeholders(text, [...path, "env", key]);
    }
    server.userToken = parseUserToken(
      c,
      raw,
      path,
      name,
      [...server.args, ...Object.values(server.env)],
      oauthConfigured,
    );
    return server;
  }
  const server: HttpServerConfig = {
    ...backend,
    transport: transport as HttpServerConfig["transport"],
    url: c.string(raw.url, [...path, "url"], "the backend's MCP endpoint URL") ?? "",
    headers: c.stringMap(raw.headers, [...path, "headers"]),
  };
  if (server.url) {
    c.placeholders(server.url, [...path, "url"]);
    try {
      const url = new URL(server.url.replace(PLACEHOLDER, "x"));
      if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error();
    } catch {
      c.fail([...path, "url"], `not an http(s) URL: ${describe(server.url)}`);
    }
  }
  for (const [key, text] of Object.entries(server.headers)) {
    c.placeholders(text, [...path, "headers", key]);
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key)) {
      c.fail([...path, "headers", key], `invalid HTTP header name "${key}"`);
    }
  }
  server.userToken = parseUserToken(
    c,
    raw,
    path,
    name,
    [server.url, ...Object.values(server.headers)],
    oauthConfigured,
  );
  return server;
}

/** Members exist, are not aggregates, and their names cannot be confused with the delimiter. */
function checkAggregates(
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

function parseMetrics(c: Checker, value: unknown): ResolvedConfig["metrics"] {
  const raw = c.object(value, ["metrics"], ["token", "listen"]) ?? {};
  const token = c.optionalString(raw.token, ["metrics", "token"]);
  if (token !== undefined && token.length < 16) {
    c.fail(["metrics", "token"], "is shorter than 16 characters", "e.g. ${METRICS_TOKEN}");
  }
  return {
    token: token === undefined ? undefined : new Secret(token),
    listen: raw.listen === undefined
      ? undefined
      : parseListen(c, raw.listen, ["metrics", "listen"]),
  };
}

function parseAudit(c: Checker, value: unknown): ResolvedConfig["audit"] {
  const raw = c.object(value, ["audit"], ["enabled", "arguments"]) ?? {};
  return {
    enabled: c.boolean(raw.enabled, ["audit", "enabled"], true),
    arguments: c.boolean(raw.arguments, ["audit", "arguments"], false),
  };
}

/** Whether `text` holds `{{user.token}}` (spaces inside the braces allowed). */
function passesUserToken(text: string): boolean {
  return [...text.matchAll(PLACEHOLDER)].some((match) => match[1] === "user.token");
}

/** Plain http to a host other than this machine. */
function isPlainHttpElsewhere(url: URL): boolean {
  return url.protocol === "http:" && !isLoopbackHttp(url);
}

/**
 * Validates a parsed configuration document: the resolved config, or every issue found.
 * `substitutions` (from loading) tell which values came from the environment.
 */
export function validateConfig(
  input: unknown,
  substitutions: Substitution[] = [],
):
  | { config: ResolvedConfig; issues: []; warnings: ConfigIssue[] }
  | { config?: undefined; issues: ConfigIssue[]; warnings: ConfigIssue[] } {
  const c = new Checker();
  const raw = c.object(input, [], TOP_KEYS) ?? {};
  const listen = parseListen(c, raw.listen);
  const baseUrl = parseBaseUrl(c, raw.baseUrl, listen);
  const storage = raw.storage === undefined
    ? DEFAULT_STORAGE
    : c.string(raw.storage, ["storage"]) ?? DEFAULT_STORAGE;

  let secret: Secret | undefined;
  if (raw.secret !== undefined && raw.secret !== null && raw.secret !== "") {
    const text = c.string(raw.secret, ["secret"]);
    if (text !== undefined && new TextEncoder().encode(text).length < MIN_SECRET_BYTES) {
      c.fail(
        ["secret"],
        `is shorter than ${MIN_SECRET_BYTES} bytes`,
        "generate one with: openssl rand -base64 48",
      );
    }
    if (text !== undefined) secret = new Secret(text);
  }

  const logLevel = raw.logLevel ?? "info";
  if (!["debug", "info", "warn", "error"].includes(logLevel as string)) {
    c.fail(["logLevel"], `unknown level ${describe(logLevel)}`, "one of: debug, info, warn, error");
  }

  const previousSecrets = c.stringList(raw.previousSecrets, ["previousSecrets"]).map((text, i) => {
    if (new TextEncoder().encode(text).length < MIN_SECRET_BYTES) {
      c.fail(["previousSecrets", i], `is shorter than ${MIN_SECRET_BYTES} bytes`);
    }
    return new Secret(text);
  });
  const oauth = parseOAuth(c, raw.oauth);
  // An unparsable baseUrl is reported already; only a valid one is checked here.
  if (oauth && URL.canParse(baseUrl) && isPlainHttpElsewhere(new URL(baseUrl))) {
    c.fail(
      ["baseUrl"],
      "must be https when oauth is configured",
      "tokens and login cookies must not travel in clear; http is accepted for localhost only",
    );
  }

  const servers = new Map<ServerName, ServerConfig>();
  const rawServers = c.object(raw.servers, ["servers"], "any");
  if (rawServers) {
    if (Object.keys(rawServers).length === 0) {
      c.fail(["servers"], "no servers are configured", "add at least one under servers:");
    }
    for (const [name, value] of Object.entries(rawServers)) {
      const server = parseServer(c, name, value, oauth !== undefined, substitutions);
      if (server) servers.set(server.name, server);
    }
  }

  checkAggregates(c, servers, rawServers ?? {});

  const limits = parseLimits(c, raw.limits);
  const config: ResolvedConfig = {
    listen,
    baseUrl,
    storage,
    secret,
    allowedOrigins: parseOrigins(c, raw.allowedOrigins),
    limits,
    connections: parseConnections(c, raw.connections, limits.requestTimeoutMs),
    rateLimits: parseRateLimits(c, raw.rateLimits),
    audit: parseAudit(c, raw.audit),
    metrics: parseMetrics(c, raw.metrics),
    replicaId: parseReplicaId(c, raw.replicaId),
    shutdownGraceMs: c.duration(raw.shutdownGrace, ["shutdownGrace"], DEFAULT_SHUTDOWN_GRACE_MS),
    logLevel: logLevel as LogLevel,
    servers,
    previousSecrets,
    oauth,
    warnings: c.warnings,
  };
  return c.issues.length
    ? { issues: c.issues, warnings: c.warnings }
    : { config, issues: [], warnings: c.warnings };
}
