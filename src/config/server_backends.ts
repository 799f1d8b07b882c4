/**
 * Servers with a backend of their own: a program the gateway starts (`stdio`) or an HTTP MCP
 * server (`streamable-http`, `sse`). Checks their command, arguments, URL and headers, the
 * `{{...}}` placeholders in them, and which of their values came from `${VAR}` (secrets to
 * hide in logs); the person's own credential is user_token.ts's.
 */
import { Secret } from "../core/secret.ts";
import { Checker, describe, type Dict } from "./checker.ts";
import type { ConfigPath } from "./issues.ts";
import type { GroupSpelling } from "./server_access.ts";
import { parseShare, SHARE_KEYS } from "./server_share.ts";
import { parseUserToken } from "./user_token.ts";
import { isLoopbackHttp } from "../core/loopback.ts";
import { isRemoteUrl, parseToolChanges, parseToolPins } from "./tool_changes.ts";
import type { BackendProtocol, HttpServerConfig, StdioServerConfig } from "./types.ts";

/** Set on servers whose backend acts as the person; never on aggregates. */
export const USER_TOKEN_KEYS = ["requiresUserToken", "userToken"];
const BACKEND_KEYS = [...USER_TOKEN_KEYS, "forwardRoots", "protocol", "toolChanges"];
/** The keys a stdio server has besides those every server has. */
export const STDIO_KEYS = [...BACKEND_KEYS, "command", "args", "env", "cwd", ...SHARE_KEYS];
/** The keys an HTTP server has besides those every server has. */
export const HTTP_KEYS = [...BACKEND_KEYS, "url", "headers", "identity"];
/** Where a server's configuration reaches its backend. */
const BACKEND_INPUTS = new Set<unknown>(["args", "env", "url", "headers"]);
const PLACEHOLDER = /\{\{\s*([^}]*?)\s*\}\}/g;
/**
 * A group pattern: a group name may hold spaces, commas and any letter, so only what no name
 * holds (control characters) is refused; `*` and `?` are the wildcards, as in `tools:`.
 */
// deno-lint-ignore no-control-regex
const GROUP_PATTERN = /^[^\x00-\x1f\x7f]{1,256}$/;
/** The values of `protocol:`, the default first. */
export const BACKEND_PROTOCOLS: readonly BackendProtocol[] = ["auto", "2025-11-25", "2026-07-28"];

/** A value `${VAR}` put into the document when it was loaded, and where. */
export interface Substitution {
  path: ConfigPath;
  value: string;
}

type Common = Pick<
  StdioServerConfig,
  "name" | "public" | "serviceAuths" | "access" | "tools" | "requestTimeoutMs"
>;
type BackendCommon = Pick<
  StdioServerConfig,
  | keyof Common
  | "forwardRoots"
  | "protocol"
  | "secretValues"
  | "toolChanges"
  | "toolChangesDefaulted"
  | "toolPins"
>;

/**
 * What stdio and HTTP servers share: roots forwarding, the revision spoken to the backend, the
 * secrets among their values, and what a changed tool definition meets (`toolChanges`,
 * `tools.pinned`).
 */
export function parseBackendCommon(
  c: Checker,
  path: ConfigPath,
  raw: Dict,
  common: Common,
  substitutions: Substitution[],
): BackendCommon {
  const backend: BackendCommon = {
    ...common,
    forwardRoots: c.boolean(raw.forwardRoots, [...path, "forwardRoots"], true),
    protocol: parseProtocol(c, raw.protocol, [...path, "protocol"], raw.transport),
    secretValues: substitutedSecrets(substitutions, path),
    ...parseToolChanges(c, raw.toolChanges, [...path, "toolChanges"], raw.transport, raw.url),
  };
  const tools = raw.tools as Dict | undefined;
  const pins = typeof tools === "object" && tools !== null
    ? parseToolPins(c, tools.pinned, [...path, "tools", "pinned"])
    : undefined;
  // Left out when not given, so that a server without them compares equal to before.
  return pins ? { ...backend, toolPins: pins } : backend;
}

/**
 * `protocol:`, `auto` unless said. A legacy HTTP+SSE backend cannot speak 2026-07-28: that
 * revision has no event stream to carry answers on, so the combination is refused here rather
 * than failing at every session.
 */
function parseProtocol(
  c: Checker,
  value: unknown,
  path: ConfigPath,
  transport: unknown,
): BackendProtocol {
  if (value === undefined) return "auto";
  if (!BACKEND_PROTOCOLS.includes(value as BackendProtocol)) {
    c.fail(path, `unknown protocol ${describe(value)}`, `one of: ${BACKEND_PROTOCOLS.join(", ")}`);
    return "auto";
  }
  if (value === "2026-07-28" && transport === "sse") {
    c.fail(
      path,
      "a legacy sse backend cannot speak MCP 2026-07-28",
      "use transport: streamable-http with the server's /mcp URL for a 2026-07-28 server, or say protocol: 2025-11-25 (or auto)",
    );
    return "auto";
  }
  return value as BackendProtocol;
}

export function parseStdio(
  c: Checker,
  path: ConfigPath,
  raw: Dict,
  backend: BackendCommon,
  oauthConfigured: boolean,
): StdioServerConfig {
  const server: StdioServerConfig = {
    ...backend,
    transport: "stdio",
    command: c.string(raw.command, [...path, "command"], "the program to start, e.g. npx") ?? "",
    args: c.stringList(raw.args, [...path, "args"]),
    env: c.stringMap(raw.env, [...path, "env"]),
    cwd: c.optionalString(raw.cwd, [...path, "cwd"]),
    share: "session",
    processes: 1,
    processIdleTimeoutMs: 0,
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
    backend.name,
    [...server.args, ...Object.values(server.env)],
    oauthConfigured,
    false,
  );
  return Object.assign(server, parseShare(c, path, raw, server));
}

export function parseHttp(
  c: Checker,
  path: ConfigPath,
  raw: Dict,
  backend: BackendCommon & Pick<HttpServerConfig, "transport">,
  oauthConfigured: boolean,
  spelling: GroupSpelling = { lowerCase: false },
): HttpServerConfig {
  const server: HttpServerConfig = {
    ...backend,
    url: c.string(raw.url, [...path, "url"], "the backend's MCP endpoint URL") ?? "",
    headers: c.stringMap(raw.headers, [...path, "headers"]),
    identity: parseIdentity(c, raw.identity, [...path, "identity"], spelling),
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
  // kind: mcp sends the person's token as the MCP authorization spec says, and kind: exchange
  // the token the provider issued for the backend, unless the configuration names its own
  // Authorization header.
  const kind = (raw.userToken as { kind?: unknown } | undefined)?.kind;
  const named = Object.keys(server.headers).some((key) => key.toLowerCase() === "authorization");
  if (raw.requiresUserToken === true && (kind === "mcp" || kind === "exchange") && !named) {
    server.headers = { ...server.headers, Authorization: "Bearer {{user.token}}" };
  }
  server.userToken = parseUserToken(
    c,
    raw,
    path,
    backend.name,
    [server.url, ...Object.values(server.headers)],
    oauthConfigured,
    true,
  );
  if (server.userToken?.kind === "mcp") checkMcpUrl(c, [...path, "url"], server.url);
  if (server.identity.headers || server.identity.assertion) {
    checkIdentityUrl(c, [...path, "url"], server.url);
  }
  return server;
}

/**
 * Who calls (identity headers, the signed assertion) sent over plain http to a host that may be
 * someone else's: anyone on the way reads it, and a bearer assertion can be replayed until it
 * expires. Allowed (a backend across a trusted link), but said.
 */
function checkIdentityUrl(c: Checker, at: ConfigPath, url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url.replace(PLACEHOLDER, "x"));
  } catch {
    return; // said above
  }
  if (parsed.protocol !== "http:" || !isRemoteUrl(url)) return;
  c.warn(
    at,
    `tells ${parsed.hostname} who calls (identity:) over plain http, which is not this machine or a private network: anyone on the way can read it, and replay an assertion until it expires`,
    "use https:// for this backend, or reach it by a loopback or private address",
  );
}

/**
 * `identity:`: headers and the signed assertion, both off unless said; `groups:` narrows which of
 * the person's groups they state (all when absent).
 */
function parseIdentity(
  c: Checker,
  value: unknown,
  at: ConfigPath,
  spelling: GroupSpelling,
): HttpServerConfig["identity"] {
  const spec = value === undefined
    ? {}
    : c.object(value, at, ["headers", "assertion", "groups"]) ?? {};
  const identity: HttpServerConfig["identity"] = {
    headers: c.boolean(spec.headers, [...at, "headers"], false),
    assertion: c.boolean(spec.assertion, [...at, "assertion"], false),
  };
  if (spec.groups === undefined) return identity;
  const path = [...at, "groups"];
  const groups = c.stringList(spec.groups, path).map((pattern, i) => {
    if (!GROUP_PATTERN.test(pattern)) {
      c.fail(
        [...path, i],
        `not a group pattern: ${describe(pattern)}`,
        "write a group name, with * for any characters and ? for one (e.g. eng-*); no line breaks or control characters, at most 256 characters",
      );
    }
    // GitHub's teams are compared lower-cased, as access: groups are.
    return spelling.lowerCase ? pattern.toLowerCase() : pattern;
  });
  if (!identity.headers && !identity.assertion) {
    c.fail(
      path,
      "names the groups a backend is told, but it is told nothing",
      "add headers: true or assertion: true beside it, or remove groups:",
    );
  }
  return { ...identity, groups };
}

/** A `kind: mcp` server's URL: one for everyone, and https (people's tokens travel to it). */
function checkMcpUrl(c: Checker, at: ConfigPath, url: string): void {
  if (url.includes("{{")) {
    c.fail(
      at,
      "a kind: mcp server's URL cannot hold placeholders",
      "give the server's one URL: its authorization is discovered once per server, not per person",
    );
    return;
  }
  try {
    const parsed = new URL(url);
    if (parsed.protocol === "http:" && !isLoopbackHttp(parsed)) {
      c.fail(
        at,
        "a kind: mcp server must be reached over https",
        "people's tokens travel to it; plain http is accepted only for this machine",
      );
    }
  } catch { /* reported above as not an http(s) URL */ }
}

/** The `${VAR}` values in what the server at `path` hands its backend: secrets, as a rule. */
function substitutedSecrets(substitutions: Substitution[], path: ConfigPath): Secret[] {
  return substitutions
    .filter(({ path: at }) => at[0] === path[0] && at[1] === path[1] && BACKEND_INPUTS.has(at[2]))
    .map(({ value }) => new Secret(value));
}

/** Whether `text` holds `{{user.token}}` (spaces inside the braces allowed). */
function passesUserToken(text: string): boolean {
  return [...text.matchAll(PLACEHOLDER)].some((match) => match[1] === "user.token");
}
