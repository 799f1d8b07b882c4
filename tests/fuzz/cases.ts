/**
 * Hostile inputs for the fuzzer, each built from the seeded random source: MCP requests (headers,
 * bodies, JSON-RPC, session ids, Last-Event-IDs), OAuth parameters and forms, browser pages,
 * and configuration files. Mostly near-valid, so the fuzzer gets past the first check.
 */
import { deepCall } from "./deep_json.ts";
import type { Random } from "./random.ts";

/** What a fuzz run knows of the gateway under test. */
export interface Target {
  base: string;
  /** The static bearer token of the `guarded` server. */
  token: string;
  /** Sessions the gateway handed out so far, by server (reused in later cases). */
  sessions: { server: string; id: string }[];
  /** Client ids registered so far. */
  clients: string[];
}

const SERVERS = ["open", "guarded", "agg"];
const ODD_SERVERS = ["nope", "OPEN", "..", "open%2F..", "a".repeat(300), "%00", "-", "_x"];
const METHODS = ["GET", "POST", "DELETE", "PUT", "PATCH", "OPTIONS", "HEAD"];
const RPC_METHODS = [
  "initialize",
  "ping",
  "tools/list",
  "tools/call",
  "prompts/list",
  "prompts/get",
  "resources/list",
  "resources/read",
  "resources/templates/list",
  "resources/subscribe",
  "completion/complete",
  "logging/setLevel",
  "notifications/initialized",
  "notifications/cancelled",
  "notifications/progress",
  "sampling/createMessage",
  "tasks/get",
  "",
];
const TOOLS = ["echo_environment", "test_simple_text", "test_error_handling", "nope", "open.echo"];
const PROTOCOLS = [
  "2026-07-28",
  "2025-11-25",
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
  "1999-01-01",
  "",
];

/** Header values must be Latin-1 without CR, LF or NUL, or Request refuses them. */
function headerValue(r: Random, max = 40): string {
  return r.text(max).replace(/[^\x20-\x7e\x80-\xff]/g, "").slice(0, 8_000);
}

function rpcMessage(r: Random): unknown {
  const method = r.chance(0.9) ? r.pick(RPC_METHODS) : r.text(20);
  const params: Record<string, unknown> = {};
  if (method === "initialize") {
    params.protocolVersion = r.chance(0.8) ? r.pick(PROTOCOLS) : r.json(1);
    params.capabilities = r.chance(0.7) ? { elicitation: { url: {} }, sampling: {} } : r.json(2);
    params.clientInfo = r.chance(0.8) ? { name: "fuzz", version: "1" } : r.json(1);
  } else if (method === "tools/call" || method === "prompts/get") {
    params.name = r.chance(0.7) ? r.pick(TOOLS) : r.json(1);
    params.arguments = r.json(2);
  } else if (method.startsWith("resources/")) {
    params.uri = r.chance(0.5) ? "test://static-text" : r.json(1);
  } else if (method === "notifications/cancelled") {
    params.requestId = r.json(1);
  } else if (r.chance(0.3)) {
    Object.assign(params, { cursor: r.json(1), _meta: { progressToken: r.json(1) } });
  }
  const message: Record<string, unknown> = { jsonrpc: r.chance(0.9) ? "2.0" : r.json(1), method };
  if (!method.startsWith("notifications/") || r.chance(0.1)) {
    message.id = r.chance(0.8) ? r.int(1_000) : r.json(1);
  }
  if (r.chance(0.9)) message.params = r.chance(0.9) ? params : r.json(2);
  if (r.chance(0.05)) message.result = r.json(2);
  if (r.chance(0.05)) message.error = r.json(2);
  return message;
}

function mcpBody(r: Random, modern: boolean): string {
  if (r.chance(0.08)) return deepCall(r, r.pick(TOOLS), modern);
  if (modern && r.chance(0.5)) return JSON.stringify(modernMessage(r));
  const choice = r.int(10);
  if (choice < 6) return JSON.stringify(rpcMessage(r));
  if (choice === 6) return JSON.stringify(Array.from({ length: r.int(4) }, () => rpcMessage(r)));
  if (choice === 7) {
    const text = JSON.stringify(rpcMessage(r));
    return text.slice(0, r.int(text.length));
  }
  if (choice === 8) return JSON.stringify(r.json(4));
  return r.chance(0.2) ? "[".repeat(10_000) : r.text(200);
}

/** A 2026-07-28 request: a session-less message carrying its `_meta` envelope. */
function modernMessage(r: Random): unknown {
  const message = rpcMessage(r) as Record<string, unknown>;
  const params = (typeof message.params === "object" && message.params) || {};
  const meta: Record<string, unknown> = {
    "io.modelcontextprotocol/protocolVersion": r.chance(0.9) ? "2026-07-28" : r.json(1),
    "io.modelcontextprotocol/clientCapabilities": r.chance(0.8) ? {} : r.json(2),
  };
  return { ...message, params: { ...params as object, _meta: meta } };
}

/** A request to an MCP endpoint: /{server}/mcp, /sse or /message. */
export function mcpRequest(r: Random, target: Target): Request {
  // Often continue a session the gateway gave out, on its own server.
  const known = target.sessions.length && r.chance(0.6) ? r.pick(target.sessions) : undefined;
  const server = known && r.chance(0.9)
    ? known.server
    : r.chance(0.9)
    ? r.pick(SERVERS)
    : r.pick(ODD_SERVERS);
  const endpoint = r.pick(["mcp", "mcp", "mcp", "sse", "message"]);
  const method = r.chance(0.75) ? "POST" : r.pick(METHODS);
  const headers = new Headers();
  if (r.chance(0.95)) {
    headers.set(
      "content-type",
      r.chance(0.85)
        ? "application/json"
        : r.pick(["application/json; charset=utf-8", "text/plain", "", "application/jsonx"]),
    );
  }
  if (r.chance(0.9)) {
    headers.set(
      "accept",
      r.chance(0.8)
        ? "application/json, text/event-stream"
        : r.pick(["application/json", "text/event-stream", "*/*", "image/png", headerValue(r)]),
    );
  }
  if (server === "guarded" || r.chance(0.1)) {
    headers.set(
      "authorization",
      r.chance(0.7) ? `Bearer ${target.token}` : r.pick([
        `Bearer ${headerValue(r)}`,
        "Bearer",
        "Basic Zm9vOmJhcg==",
        `Bearer a.b.c`,
        `Bearer eyJhbGciOiJub25lIn0.e30.`,
        headerValue(r),
      ]),
    );
  }
  if (known) {
    headers.set("mcp-session-id", r.chance(0.95) ? known.id : headerValue(r, 10));
  } else if (r.chance(0.1)) headers.set("mcp-session-id", headerValue(r, 10));
  if (r.chance(0.5)) {
    headers.set("mcp-protocol-version", r.chance(0.8) ? r.pick(PROTOCOLS) : headerValue(r, 8));
  }
  if (method === "GET" && r.chance(0.5)) {
    headers.set("last-event-id", r.chance(0.5) ? `${r.int(100)}_${r.int(100)}` : headerValue(r));
  }
  if (r.chance(0.1)) {
    headers.set("origin", r.pick(["https://evil.example", "null", headerValue(r)]));
  }
  let query = "";
  if (endpoint === "message" || r.chance(0.05)) {
    query = `?sessionId=${
      encodeURIComponent(
        known && r.chance(0.8) ? known.id : headerValue(r, 10),
      )
    }`;
  }
  if (r.chance(0.05)) {
    query += `${query ? "&" : "?"}access_token=${encodeURIComponent(headerValue(r, 10))}`;
  }
  const modern = headers.get("mcp-protocol-version") === "2026-07-28";
  const hasBody = method === "POST" || method === "PUT" || method === "PATCH";
  let body: string | undefined = hasBody ? mcpBody(r, modern) : undefined;
  if (modern && body && r.chance(0.9)) {
    // The headers a 2026 request mirrors from its body, mostly right.
    const sent = /"method":"([^"]*)"/.exec(body)?.[1];
    const name = /"name":"([^"]*)"/.exec(body)?.[1];
    if (sent !== undefined) headers.set("mcp-method", r.chance(0.9) ? sent : headerValue(r, 12));
    if (name !== undefined) headers.set("mcp-name", r.chance(0.9) ? name : headerValue(r, 12));
  }
  if (hasBody && r.chance(0.01)) body = "x".repeat(5 * 1024 * 1024);
  return new Request(`${target.base}/${server}/${endpoint}${query}`, {
    method,
    headers,
    body,
    signal: AbortSignal.timeout(3_000),
  });
}

function randomParams(r: Random, keys: string[], good: Record<string, string>): URLSearchParams {
  const params = new URLSearchParams();
  for (const key of keys) {
    if (r.chance(0.15)) continue;
    const value = r.chance(0.6) && good[key] !== undefined ? good[key] : r.text(30);
    params.append(key, value);
    if (r.chance(0.05)) params.append(key, r.text(10));
  }
  if (r.chance(0.2)) params.append(r.text(8), r.text(20));
  return params;
}

/** OAuth endpoints, the browser pages and their forms. */
export function oauthRequest(r: Random, target: Target): Request {
  const client = target.clients.length && r.chance(0.7) ? r.pick(target.clients) : r.text(20);
  const good: Record<string, string> = {
    client_id: client,
    redirect_uri: "http://127.0.0.1:9/callback",
    response_type: "code",
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    code_challenge_method: "S256",
    state: "fuzz-state",
    resource: `${target.base}/open`,
    scope: "mcp",
    grant_type: r.pick(["authorization_code", "refresh_token", "client_credentials", "password"]),
    code: "fuzz-code",
    code_verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
    refresh_token: "fuzz-refresh",
    service: r.pick(["open", "guarded", "agg", "nope"]),
    request: "A".repeat(32),
    csrf: "x".repeat(43),
    token: r.text(20),
    next: r.pick(["tokens", `services:${"A".repeat(32)}`, "//evil.example"]),
    decision: r.pick(["allow", "deny"]),
  };
  const headers = new Headers();
  if (r.chance(0.3)) {
    headers.set(
      "cookie",
      `gatehouse_sso=${headerValue(r, 20)}; gatehouse_login=${headerValue(r, 20)}`,
    );
  }
  const form = (keys: string[]) => {
    headers.set(
      "content-type",
      r.chance(0.85)
        ? "application/x-www-form-urlencoded"
        : r.pick(["application/json", "text/plain", ""]),
    );
    return r.chance(0.9) ? randomParams(r, keys, good).toString() : r.text(300);
  };
  const kind = r.int(12);
  let path: string;
  let method = "GET";
  let body: string | undefined;
  switch (kind) {
    case 0:
    case 1:
      path = `/authorize?${
        randomParams(r, [
          "client_id",
          "redirect_uri",
          "response_type",
          "code_challenge",
          "code_challenge_method",
          "state",
          "resource",
          "scope",
        ], good)
      }`;
      break;
    case 2:
    case 3:
      method = "POST";
      path = "/token";
      body = form([
        "grant_type",
        "code",
        "redirect_uri",
        "client_id",
        "code_verifier",
        "refresh_token",
        "resource",
      ]);
      if (r.chance(0.2)) {
        headers.set(
          "authorization",
          `Basic ${btoa(`${headerValue(r, 10)}:${headerValue(r, 10)}`)}`,
        );
      }
      break;
    case 4: {
      method = "POST";
      path = "/register";
      headers.set("content-type", r.chance(0.9) ? "application/json" : "text/plain");
      const registration: Record<string, unknown> = {
        client_name: r.chance(0.5) ? "fuzz" : r.json(1),
        redirect_uris: r.chance(0.6) ? ["http://127.0.0.1:9/callback"] : r.json(2),
        grant_types: r.chance(0.6) ? ["authorization_code", "refresh_token"] : r.json(1),
        token_endpoint_auth_method: r.pick([
          "none",
          "client_secret_post",
          "client_secret_basic",
          "private_key_jwt",
          7,
        ]),
      };
      if (r.chance(0.3)) registration[r.text(8)] = r.json(2);
      body = r.chance(0.9) ? JSON.stringify(registration) : r.text(300);
      break;
    }
    case 5:
      path = `/oauth/callback${r.chance(0.3) ? `/${r.pick(["open", "nope", "x"])}` : ""}?${
        randomParams(r, ["state", "code", "error", "iss"], good)
      }`;
      break;
    case 6:
      method = "POST";
      path = r.pick([
        "/authorize/consent",
        "/logout",
        "/my/tokens/set",
        "/my/tokens/delete",
        "/oauth/disconnect",
      ]);
      body = form(["request", "csrf", "decision", "service", "token", "next"]);
      break;
    case 7:
      path = `${
        r.pick(["/my/tokens", "/oauth/connect", "/oauth/services", "/oauth/complete", "/logout"])
      }?${randomParams(r, ["service", "request", "next", "notice"], good)}`;
      break;
    case 8:
      path = r.pick([
        "/.well-known/oauth-authorization-server",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/open/mcp",
        `/.well-known/oauth-protected-resource/${headerValue(r, 10)}`,
        `/clients/${encodeURIComponent(client)}`,
        "/health",
        "/metrics",
      ]);
      break;
    case 9:
      method = r.pick(METHODS);
      path = r.pick([
        "/token",
        "/register",
        "/authorize",
        "/.well-known/oauth-authorization-server",
      ]);
      if (method === "POST" || method === "PUT") body = r.text(100);
      if (method === "OPTIONS") headers.set("origin", "https://app.example.com");
      break;
    default:
      method = r.pick(METHODS);
      path = `/${
        Array.from({ length: r.int(5) }, () => encodeURIComponent(headerValue(r, 12))).join("/")
      }`;
      if (method === "POST") body = r.text(100);
  }
  return new Request(`${target.base}${path}`, {
    method,
    headers,
    body: method === "GET" || method === "HEAD" ? undefined : body,
    redirect: "manual",
    signal: AbortSignal.timeout(3_000),
  });
}

/** A configuration file damaged in one or a few places. */
export function configText(r: Random, samples: string[]): string {
  const lines = r.pick(samples).split("\n");
  for (let i = 0, n = 1 + r.int(3); i < n; i++) {
    const at = r.int(lines.length);
    switch (r.int(6)) {
      case 0:
        lines.splice(at, 1);
        break;
      case 1:
        lines.splice(at, 0, lines[r.int(lines.length)] ?? "");
        break;
      case 2:
        lines[at] = (lines[at] ?? "").replace(
          /\S/,
          r.pick([":", "-", "[", "{", "&", "*", "!", "%", "@"]),
        );
        break;
      case 3:
        lines[at] = `${" ".repeat(r.int(8))}${(lines[at] ?? "").trimStart()}`;
        break;
      case 4:
        lines.splice(at, 0, `${" ".repeat(r.int(6))}${r.text(10)}: ${r.text(20)}`);
        break;
      default:
        lines[at] = (lines[at] ?? "").replace(
          /: .*$/,
          `: ${r.pick(["", "~", "[]", "{}", "-1", "1e999", r.text(15)])}`,
        );
    }
  }
  return lines.join("\n");
}
