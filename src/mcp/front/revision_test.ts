/**
 * classifyRequest(): one row per request as a client sends it and the exact lane or refusal.
 * Rows follow spec_2026 §1.3 and §1.6, and the envelope checks of the conformance scenarios
 * `server-stateless` and `http-header-validation` (0.2.0-alpha.12); then 2025 requests that
 * must stay on the session lane as today.
 */
import assert from "node:assert/strict";
import {
  classifyRequest,
  type HeaderReader,
  type IncomingRequest,
  type LaneChoice,
} from "./revision.ts";
import {
  CACHEABLE_METHODS,
  decodeHeaderValue,
  encodeHeaderValue,
  isCacheableMethod,
  isModernProtocolVersion,
  REMOVED_METHODS,
} from "../protocol/protocol_versions.ts";

const V = "2026-07-28";
const PV = "io.modelcontextprotocol/protocolVersion";
const CC = "io.modelcontextprotocol/clientCapabilities";
const CI = "io.modelcontextprotocol/clientInfo";
const LL = "io.modelcontextprotocol/logLevel";
const CLIENT = { name: "conformance", version: "0.2.0" };
const META = { [PV]: V, [CC]: {}, [CI]: CLIENT };
const HINT = `an MCP 2026-07-28 request carries ${PV} (its revision) and ${CC} ({} when the ` +
  "client offers none) in params._meta";
const SESSION_VERSIONS = "2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05, 2024-10-07";

type Body = Record<string, unknown>;

/** A JSON-RPC request; `meta` replaces the full 2026 `_meta` (undefined: leave it out). */
function rpc(method: string, params: Body = {}, id: string | number = 1): Body {
  return { jsonrpc: "2.0", id, method, params };
}
function modern(method: string, params: Body = {}, meta: Body = META, id: string | number = 1) {
  return rpc(method, { ...params, _meta: meta }, id);
}
/** The headers a 2026 client sends with `body`, before a row changes some. */
function modernHeaders(method: string, name?: string): Record<string, string> {
  const headers: Record<string, string> = { "MCP-Protocol-Version": V, "Mcp-Method": method };
  if (name !== undefined) headers["Mcp-Name"] = name;
  return headers;
}
function post(body: unknown, headers: Record<string, string> = {}): IncomingRequest {
  return { method: "POST", headers: new Headers(headers), body };
}
/** A reader that keeps whitespace around values, as a runtime without Headers may. */
function rawHeaders(fields: Record<string, string>): HeaderReader {
  const lower = new Map(Object.entries(fields).map(([k, v]) => [k.toLowerCase(), v]));
  return { get: (name) => lower.get(name.toLowerCase()) ?? null };
}

const session = (protocolVersionHeader: string | null = null): LaneChoice => ({
  lane: "session",
  protocolVersionHeader,
});
function stateless(body: Body, extra: Body = {}): LaneChoice {
  const meta = (body.params as Body)._meta as Body;
  const envelope: Body = { protocolVersion: meta[PV], clientCapabilities: meta[CC] };
  if (meta[CI] !== undefined) envelope.clientInfo = meta[CI];
  if (meta[LL] !== undefined) envelope.logLevel = meta[LL];
  Object.assign(envelope, { method: body.method, id: body.id }, extra);
  return { lane: "stateless", kind: "request", envelope, message: body } as unknown as LaneChoice;
}
function refused(
  status: number,
  code: number,
  message: string,
  data?: unknown,
  id: string | number | null = 1,
): LaneChoice {
  return data === undefined
    ? { lane: "refused", status, code, message, id }
    : { lane: "refused", status, code, message, data, id };
}
const missing = (header: string, expected: string, message: string, id: string | number = 1) =>
  refused(400, -32020, message, { header, expected, received: null }, id);
const mismatch = (header: string, expected: string, received: string, message: string) =>
  refused(400, -32020, message, { header, expected, received });

interface Row {
  name: string;
  request: IncomingRequest;
  expect: LaneChoice;
}

const list = modern("tools/list");
const call = modern("tools/call", { name: "echo", arguments: { text: "hi" } });
const discover = modern("server/discover");
const read = modern("resources/read", { uri: "test://static-text" });
const prompt = modern("prompts/get", { name: "test_simple_prompt" });
const cafe = modern("tools/call", { name: "café ☕", arguments: {} });
const hello = modern("tools/call", { name: "Hello", arguments: {} });
const cancelled = {
  jsonrpc: "2.0" as const,
  method: "notifications/cancelled",
  params: { requestId: 7, _meta: { [PV]: V } },
};

const ROWS: Row[] = [
  // ---- §1.6 and §1.3, in the order the checks run ----
  {
    name: "refuses a batch that holds a 2026 request (400, -32600)",
    request: post([rpc("tools/list", {}, 1), modern("tools/list", {}, META, 2)]),
    expect: refused(
      400,
      -32600,
      "Invalid Request: a JSON-RPC batch may not hold an MCP 2026-07-28 message (batch[1] " +
        `carries ${PV} in params._meta); send each message in its own POST`,
      undefined,
      null,
    ),
  },
  {
    name: "refuses a posted response under a 2026 header (400, -32600)",
    request: post({ jsonrpc: "2.0", id: 0, result: {} }, { "MCP-Protocol-Version": V }),
    expect: refused(
      400,
      -32600,
      "Invalid Request: an MCP 2026-07-28 client posts no JSON-RPC responses (a server asks " +
        "for input with an input_required result); retry the original request with " +
        "params.inputResponses instead",
      undefined,
      null,
    ),
  },
  {
    name: "refuses a posted response whose result claims 2026 (400, -32600)",
    request: post({ jsonrpc: "2.0", id: 0, result: { _meta: { [PV]: V } } }),
    expect: refused(
      400,
      -32600,
      "Invalid Request: an MCP 2026-07-28 client posts no JSON-RPC responses (a server asks " +
        "for input with an input_required result); retry the original request with " +
        "params.inputResponses instead",
      undefined,
      null,
    ),
  },
  {
    name: "refuses initialize without a claim under a 2026 header (400, -32020)",
    request: post(
      rpc("initialize", { protocolVersion: V, capabilities: {}, clientInfo: CLIENT }),
      modernHeaders("initialize"),
    ),
    expect: refused(
      400,
      -32020,
      'Bad Request: initialize opens an MCP 2025 session, but the MCP-Protocol-Version header names "2026-07-28"; ' +
        "send initialize with a 2025 MCP-Protocol-Version (or none), or, for 2026-07-28, skip " +
        "initialize and send server/discover with params._meta",
      { header: "MCP-Protocol-Version", received: V },
    ),
  },
  {
    name: "refuses server/discover with params {} under a 2026 header (400, -32602)",
    request: post(rpc("server/discover", {}), modernHeaders("server/discover")),
    expect: refused(
      400,
      -32602,
      'Invalid params: the MCP-Protocol-Version header names "2026-07-28", but the request has ' +
        `no params._meta; ${HINT}`,
      { envelope: { missing: ["_meta"] } },
    ),
  },
  {
    name: "refuses a request without params under a 2026 header, never the session lane",
    request: post(
      { jsonrpc: "2.0", id: "a", method: "tools/list" },
      { ...modernHeaders("tools/list"), "Mcp-Session-Id": "f".repeat(32) },
    ),
    expect: refused(
      400,
      -32602,
      'Invalid params: the MCP-Protocol-Version header names "2026-07-28", but the request has ' +
        `no params._meta; ${HINT}`,
      { envelope: { missing: ["_meta"] } },
      "a",
    ),
  },
  {
    name: "refuses server/discover without protocolVersion in _meta (400, -32602)",
    request: post(
      modern("server/discover", {}, { [CC]: {}, [CI]: CLIENT }),
      modernHeaders("server/discover"),
    ),
    expect: refused(
      400,
      -32602,
      'Invalid params: the MCP-Protocol-Version header names "2026-07-28", but params._meta ' +
        `lacks ${PV}; ${HINT}`,
      { envelope: { missing: [PV] } },
    ),
  },
  {
    name: "refuses server/discover without clientCapabilities in _meta (400, -32602)",
    request: post(
      modern("server/discover", {}, { [PV]: V, [CI]: CLIENT }),
      modernHeaders("server/discover"),
    ),
    expect: refused(
      400,
      -32602,
      `Invalid params: params._meta lacks ${CC}; ${HINT}`,
      { envelope: { missing: [CC] } },
    ),
  },
  {
    name: "serves server/discover without clientInfo (it is optional)",
    request: post(
      modern("server/discover", {}, { [PV]: V, [CC]: {} }),
      modernHeaders("server/discover"),
    ),
    expect: stateless(modern("server/discover", {}, { [PV]: V, [CC]: {} })),
  },
  {
    name: "refuses a _meta whose protocolVersion is not a string (400, -32602)",
    request: post(
      modern("tools/list", {}, { ...META, [PV]: 20260728 }),
      modernHeaders("tools/list"),
    ),
    expect: refused(
      400,
      -32602,
      `Invalid params: params._meta ${PV} must be a string such as "2026-07-28"`,
      { envelope: { key: PV } },
    ),
  },
  {
    name: "refuses clientCapabilities that are not an object (400, -32602)",
    request: post(
      modern("tools/list", {}, { ...META, [CC]: ["sampling"] }),
      modernHeaders("tools/list"),
    ),
    expect: refused(
      400,
      -32602,
      `Invalid params: params._meta ${CC} must be an object ({} when it offers none)`,
      { envelope: { key: CC } },
    ),
  },
  {
    name: "refuses a clientInfo without a version (400, -32602)",
    request: post(
      modern("tools/list", {}, { ...META, [CI]: { name: "x" } }),
      modernHeaders("tools/list"),
    ),
    expect: refused(
      400,
      -32602,
      `Invalid params: params._meta ${CI} must be an object with a string name and version`,
      { envelope: { key: CI } },
    ),
  },
  {
    name: "refuses a logLevel that is not a log level (400, -32602)",
    request: post(
      modern("tools/list", {}, { ...META, [LL]: "verbose" }),
      modernHeaders("tools/list"),
    ),
    expect: refused(
      400,
      -32602,
      `Invalid params: params._meta ${LL} "verbose" is not a log level; send one of debug, ` +
        "info, notice, warning, error, critical, alert, emergency, or none for no log messages",
      { envelope: { key: LL } },
    ),
  },
  {
    name: "refuses an unsound envelope before comparing it with the headers",
    request: post(modern("tools/list", {}, { [PV]: V }), { "MCP-Protocol-Version": "2025-11-25" }),
    expect: refused(
      400,
      -32602,
      `Invalid params: params._meta lacks ${CC}; ${HINT}`,
      { envelope: { missing: [CC] } },
    ),
  },
  {
    name: "refuses a body version that differs from the header before asking if it is served",
    request: post(
      modern("tools/list", {}, { ...META, [PV]: "v999.0.0" }),
      modernHeaders("tools/list"),
    ),
    expect: mismatch(
      "MCP-Protocol-Version",
      "v999.0.0",
      V,
      `Bad Request: MCP-Protocol-Version header "2026-07-28" does not match the body's ` +
        `params._meta ${PV} "v999.0.0"; send MCP-Protocol-Version: v999.0.0`,
    ),
  },
  {
    name: "refuses a Mcp-Method mismatch before asking if the version is served",
    request: post(modern("tools/list", {}, { ...META, [PV]: "v999.0.0" }), {
      "MCP-Protocol-Version": "v999.0.0",
      "Mcp-Method": "prompts/list",
    }),
    expect: mismatch(
      "Mcp-Method",
      "tools/list",
      "prompts/list",
      'Bad Request: Mcp-Method header "prompts/list" does not match the body\'s method ' +
        '"tools/list"; send Mcp-Method: tools/list',
    ),
  },
  {
    name: "refuses a version the gateway does not serve, listing what it serves (400, -32022)",
    request: post(modern("server/discover", {}, { ...META, [PV]: "v999.0.0" }), {
      "MCP-Protocol-Version": "v999.0.0",
      "Mcp-Method": "server/discover",
    }),
    expect: refused(
      400,
      -32022,
      'Unsupported protocol version: this gateway does not serve "v999.0.0"; send 2026-07-28 ' +
        "in params._meta and MCP-Protocol-Version, or open a session with initialize for " +
        SESSION_VERSIONS,
      { supported: [V, ...SESSION_VERSIONS.split(", ")], requested: "v999.0.0" },
    ),
  },
  {
    name: "refuses a claim naming a 2025 revision (400, -32022): those open sessions",
    request: post(modern("tools/list", {}, { ...META, [PV]: "2025-11-25" }), {
      "MCP-Protocol-Version": "2025-11-25",
      "Mcp-Method": "tools/list",
    }),
    expect: refused(
      400,
      -32022,
      'Unsupported protocol version: this gateway does not serve "2025-11-25"; send 2026-07-28 ' +
        "in params._meta and MCP-Protocol-Version, or open a session with initialize for " +
        SESSION_VERSIONS,
      { supported: [V, ...SESSION_VERSIONS.split(", ")], requested: "2025-11-25" },
    ),
  },
  {
    name: "refuses a 2026 request without MCP-Protocol-Version (400, -32020)",
    request: post(list, { "Mcp-Method": "tools/list" }),
    expect: missing(
      "MCP-Protocol-Version",
      V,
      "Bad Request: the MCP-Protocol-Version header is missing; send MCP-Protocol-Version: " +
        "2026-07-28, the version in params._meta",
    ),
  },
  {
    name: "refuses a 2026 request without Mcp-Method (400, -32020)",
    request: post(list, { "MCP-Protocol-Version": V }),
    expect: missing(
      "Mcp-Method",
      "tools/list",
      "Bad Request: the Mcp-Method header is missing; send Mcp-Method: tools/list, the body's method",
    ),
  },
  {
    name: "refuses Mcp-Method: prompts/list on a tools/list body (400, -32020)",
    request: post(list, modernHeaders("prompts/list")),
    expect: mismatch(
      "Mcp-Method",
      "tools/list",
      "prompts/list",
      'Bad Request: Mcp-Method header "prompts/list" does not match the body\'s method ' +
        '"tools/list"; send Mcp-Method: tools/list',
    ),
  },
  {
    name: "refuses Mcp-Method: TOOLS/LIST, values being case-sensitive (400, -32020)",
    request: post(list, modernHeaders("TOOLS/LIST")),
    expect: mismatch(
      "Mcp-Method",
      "tools/list",
      "TOOLS/LIST",
      'Bad Request: Mcp-Method header "TOOLS/LIST" does not match the body\'s method ' +
        '"tools/list"; send Mcp-Method: tools/list',
    ),
  },
  {
    name: "accepts the header name mcp-method in lower case",
    request: post(list, { "mcp-protocol-version": V, "mcp-method": "tools/list" }),
    expect: stateless(list),
  },
  {
    name: "accepts the header name MCP-METHOD in upper case",
    request: post(list, { "MCP-PROTOCOL-VERSION": V, "MCP-METHOD": "tools/list" }),
    expect: stateless(list),
  },
  {
    name: "refuses Mcp-Name: wrong_tool_name on a call of echo (400, -32020)",
    request: post(call, modernHeaders("tools/call", "wrong_tool_name")),
    expect: mismatch(
      "Mcp-Name",
      "echo",
      "wrong_tool_name",
      'Bad Request: Mcp-Name header "wrong_tool_name" does not match the body\'s params.name ' +
        '"echo"; send Mcp-Name: echo',
    ),
  },
  {
    name: "refuses a tools/call without Mcp-Name (400, -32020)",
    request: post(call, modernHeaders("tools/call")),
    expect: missing(
      "Mcp-Name",
      "echo",
      "Bad Request: the Mcp-Name header is missing; send Mcp-Name: echo, the body's params.name",
    ),
  },
  {
    name: "accepts headers with whitespace around their values, trimmed (RFC 9110 §5.5)",
    request: {
      method: "POST",
      headers: rawHeaders({
        "MCP-Protocol-Version": ` ${V}\t`,
        "Mcp-Method": "\ttools/call ",
        "Mcp-Name": "  echo  ",
      }),
      body: call,
    },
    expect: stateless(call, { name: "echo" }),
  },
  {
    name: "accepts a base64 Mcp-Name that decodes to the body's name",
    request: post(cafe, modernHeaders("tools/call", "=?base64?Y2Fmw6kg4piV?=")),
    expect: stateless(cafe, { name: "café ☕" }),
  },
  {
    name: "refuses a base64 Mcp-Name that decodes to another name, showing both",
    request: post(call, modernHeaders("tools/call", "=?base64?ZWNobzI=?=")),
    expect: mismatch(
      "Mcp-Name",
      "echo",
      "=?base64?ZWNobzI=?=",
      'Bad Request: Mcp-Name header "=?base64?ZWNobzI=?=" (decoded "echo2") does not match ' +
        'the body\'s params.name "echo"; send Mcp-Name: echo',
    ),
  },
  {
    name: "refuses a base64 Mcp-Name without its padding (400, -32020)",
    request: post(hello, modernHeaders("tools/call", "=?base64?SGVsbG8?=")),
    expect: refused(
      400,
      -32020,
      'Bad Request: Mcp-Name header "=?base64?SGVsbG8?=" is not valid =?base64?…?= (padded ' +
        "base64 of UTF-8 bytes); send Mcp-Name: Hello, the body's params.name",
      { header: "Mcp-Name", expected: "Hello", received: "=?base64?SGVsbG8?=" },
    ),
  },
  {
    name: "refuses a base64 Mcp-Name with characters outside base64 (400, -32020)",
    request: post(hello, modernHeaders("tools/call", "=?base64?SGVs!!!bG8=?=")),
    expect: refused(
      400,
      -32020,
      'Bad Request: Mcp-Name header "=?base64?SGVs!!!bG8=?=" is not valid =?base64?…?= (padded ' +
        "base64 of UTF-8 bytes); send Mcp-Name: Hello, the body's params.name",
      { header: "Mcp-Name", expected: "Hello", received: "=?base64?SGVs!!!bG8=?=" },
    ),
  },
  {
    name: "tells a client that sent a non-ASCII name plainly how to encode it",
    request: post(cafe, modernHeaders("tools/call")),
    expect: missing(
      "Mcp-Name",
      "café ☕",
      "Bad Request: the Mcp-Name header is missing; send Mcp-Name: =?base64?Y2Fmw6kg4piV?=, " +
        "the body's params.name",
    ),
  },
  {
    name: "takes Mcp-Name of resources/read from params.uri",
    request: post(read, modernHeaders("resources/read", "test://static-text")),
    expect: stateless(read, { name: "test://static-text" }),
  },
  {
    name: "refuses a resources/read without Mcp-Name, naming params.uri",
    request: post(read, modernHeaders("resources/read")),
    expect: missing(
      "Mcp-Name",
      "test://static-text",
      "Bad Request: the Mcp-Name header is missing; send Mcp-Name: test://static-text, the " +
        "body's params.uri",
    ),
  },
  {
    name: "serves prompts/get with its name in the envelope",
    request: post(prompt, modernHeaders("prompts/get", "test_simple_prompt")),
    expect: stateless(prompt, { name: "test_simple_prompt" }),
  },
  {
    name: "leaves a tools/call without params.name to the lane (no name to mirror)",
    request: post(modern("tools/call", { arguments: {} }), modernHeaders("tools/call")),
    expect: stateless(modern("tools/call", { arguments: {} })),
  },
  {
    name: "checks the headers of a removed method before answering 404",
    request: post(modern("ping"), { "MCP-Protocol-Version": V }),
    expect: missing(
      "Mcp-Method",
      "ping",
      "Bad Request: the Mcp-Method header is missing; send Mcp-Method: ping, the body's method",
    ),
  },
  {
    name: "answers initialize with a sound 2026 claim as a removed method (404, -32601)",
    request: post(modern("initialize"), modernHeaders("initialize")),
    expect: refused(
      404,
      -32601,
      "Method not found: initialize does not exist in MCP 2026-07-28; send server/discover to " +
        "learn the server, and put clientInfo and clientCapabilities in each request's params._meta",
    ),
  },
  {
    name: "answers ping as a removed method (404, -32601)",
    request: post(modern("ping", {}, META, "p"), modernHeaders("ping")),
    expect: refused(
      404,
      -32601,
      "Method not found: ping does not exist in MCP 2026-07-28; there is no ping: any request " +
        "shows whether the server is alive",
      undefined,
      "p",
    ),
  },
  {
    name: "answers logging/setLevel as a removed method (404, -32601)",
    request: post(modern("logging/setLevel", { level: "info" }), modernHeaders("logging/setLevel")),
    expect: refused(
      404,
      -32601,
      `Method not found: logging/setLevel does not exist in MCP 2026-07-28; set ${LL} in each ` +
        "request's params._meta",
    ),
  },
  {
    name: "answers resources/subscribe as a removed method (404, -32601)",
    request: post(
      modern("resources/subscribe", { uri: "test://watched-resource" }),
      modernHeaders("resources/subscribe"),
    ),
    expect: refused(
      404,
      -32601,
      "Method not found: resources/subscribe does not exist in MCP 2026-07-28; send " +
        "subscriptions/listen with params.notifications.resourceSubscriptions",
    ),
  },
  {
    name: "answers resources/unsubscribe as a removed method (404, -32601)",
    request: post(
      modern("resources/unsubscribe", { uri: "test://watched-resource" }),
      modernHeaders("resources/unsubscribe"),
    ),
    expect: refused(
      404,
      -32601,
      "Method not found: resources/unsubscribe does not exist in MCP 2026-07-28; close the " +
        "subscriptions/listen stream that subscribed",
    ),
  },
  {
    name:
      "leaves an unknown method to the stateless lane (extensions pass; the lane 404s the rest)",
    request: post(modern("unknown/method"), modernHeaders("unknown/method")),
    expect: stateless(modern("unknown/method")),
  },
  {
    name: "serves a complete 2026 request with its envelope, logLevel included",
    request: post(
      modern("tools/list", {}, { ...META, [LL]: "warning" }, "list-1"),
      modernHeaders("tools/list"),
    ),
    expect: stateless(modern("tools/list", {}, { ...META, [LL]: "warning" }, "list-1")),
  },
  {
    name: "ignores Mcp-Session-Id on a 2026 request",
    request: post(discover, {
      ...modernHeaders("server/discover"),
      "Mcp-Session-Id": "f".repeat(32),
    }),
    expect: stateless(discover),
  },
  // ---- Notifications: 202 for the front; notifications/cancelled is the only one defined ----
  {
    name: "passes notifications/cancelled with a claim to the stateless lane",
    request: post(cancelled, modernHeaders("notifications/cancelled")),
    expect: { lane: "stateless", kind: "notification", protocolVersion: V, message: cancelled },
  },
  {
    name: "passes a notification under a 2026 header without a claim to the stateless lane",
    request: post({ jsonrpc: "2.0", method: "notifications/initialized" }, {
      "MCP-Protocol-Version": V,
    }),
    expect: {
      lane: "stateless",
      kind: "notification",
      protocolVersion: V,
      message: { jsonrpc: "2.0", method: "notifications/initialized" },
    },
  },
  {
    name: "refuses a notification whose Mcp-Method differs (400, -32020, id null)",
    request: post(cancelled, modernHeaders("notifications/progress")),
    expect: refused(
      400,
      -32020,
      'Bad Request: Mcp-Method header "notifications/progress" does not match the body\'s ' +
        'method "notifications/cancelled"; send Mcp-Method: notifications/cancelled',
      {
        header: "Mcp-Method",
        expected: "notifications/cancelled",
        received: "notifications/progress",
      },
      null,
    ),
  },
  {
    name: "refuses a notification whose claim and header differ (400, -32020, id null)",
    request: post(cancelled, { "MCP-Protocol-Version": "2025-11-25" }),
    expect: refused(
      400,
      -32020,
      'Bad Request: MCP-Protocol-Version header "2025-11-25" does not match the body\'s ' +
        `params._meta ${PV} "2026-07-28"; send MCP-Protocol-Version: 2026-07-28`,
      { header: "MCP-Protocol-Version", expected: V, received: "2025-11-25" },
      null,
    ),
  },
  // ---- 2025: the session lane, unchanged ----
  {
    name: "keeps initialize without a claim or header on the session lane",
    request: post(
      rpc("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: CLIENT }),
    ),
    expect: session(),
  },
  {
    name: "keeps initialize under a 2025 header on the session lane, with the header",
    request: post(
      rpc("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: CLIENT }),
      { "MCP-Protocol-Version": "2025-06-18" },
    ),
    expect: session("2025-06-18"),
  },
  {
    name: "keeps initialize whose claim is unsound, without a 2026 header, on the session lane",
    request: post(modern("initialize", {}, { [PV]: V })),
    expect: session(),
  },
  {
    name: "keeps a request with Mcp-Session-Id and no claim on the session lane",
    request: post(rpc("tools/list"), {
      "Mcp-Session-Id": "f".repeat(32),
      "MCP-Protocol-Version": "2025-11-25",
    }),
    expect: session("2025-11-25"),
  },
  {
    name: "keeps a 2025 request whose _meta has only a progressToken on the session lane",
    request: post(rpc("tools/call", { name: "echo", _meta: { progressToken: 1 } }), {
      "MCP-Protocol-Version": "2025-11-25",
      "Mcp-Method": "prompts/list",
    }),
    expect: session("2025-11-25"),
  },
  {
    name: "keeps a posted response on the session lane",
    request: post({ jsonrpc: "2.0", id: 0, result: { action: "accept" } }, {
      "Mcp-Session-Id": "f".repeat(32),
    }),
    expect: session(),
  },
  {
    name: "keeps a 2025 notification on the session lane",
    request: post({ jsonrpc: "2.0", method: "notifications/initialized" }),
    expect: session(),
  },
  {
    name: "keeps a batch of 2025 messages on the session lane (which refuses batches)",
    request: post([rpc("tools/list", {}, 1), rpc("prompts/list", {}, 2)]),
    expect: session(),
  },
  {
    name: "keeps a body that is not JSON-RPC on the session lane (its parser answers -32600)",
    request: post({ hello: "world", params: { _meta: META } }, modernHeaders("tools/list")),
    expect: session(V),
  },
  {
    name: "keeps GET on the session lane, 2026 header or not (2026-07-28 is POST only)",
    request: { method: "GET", headers: new Headers({ "MCP-Protocol-Version": V }) },
    expect: session(V),
  },
  {
    name: "keeps DELETE on the session lane",
    request: { method: "DELETE", headers: new Headers({ "Mcp-Session-Id": "f".repeat(32) }) },
    expect: session(),
  },
  {
    name: "keeps an unsupported 2025-era header on the session lane, which refuses it as today",
    request: post(rpc("tools/list"), { "MCP-Protocol-Version": "1999-01-01" }),
    expect: session("1999-01-01"),
  },
  {
    name: "keeps a header that is no date on the session lane, however it sorts",
    request: post(rpc("tools/list"), { "MCP-Protocol-Version": "v999.0.0" }),
    expect: session("v999.0.0"),
  },
];

for (const row of ROWS) {
  Deno.test(`classifyRequest() ${row.name}`, () => {
    assert.deepEqual(classifyRequest(row.request), row.expect);
  });
}

/** Counts header reads, to show what a 2025 request pays. */
function countingHeaders(fields: Record<string, string>) {
  const headers = new Headers(fields);
  const reads: string[] = [];
  return { reads, get: (name: string) => (reads.push(name), headers.get(name)) };
}

Deno.test("classifyRequest() reads only MCP-Protocol-Version of a 2025 request and allocates no answer", () => {
  const body = rpc("tools/call", { name: "echo", arguments: {} });
  for (const version of [undefined, "2025-11-25", "2025-06-18"]) {
    const headers = countingHeaders({
      "Mcp-Session-Id": "f".repeat(32),
      ...(version ? { "MCP-Protocol-Version": version } : {}),
    });
    const first = classifyRequest({ method: "POST", headers, body });
    const second = classifyRequest({ method: "POST", headers, body });
    assert.deepEqual(headers.reads, ["mcp-protocol-version", "mcp-protocol-version"]);
    assert.equal(first, second, "the same shared answer for each request");
  }
});

Deno.test("classifyRequest() echoes the request id, string or number, in every refusal", () => {
  for (const id of ["req-1", 0, 42]) {
    const body = modern("tools/list", {}, META, id);
    const choice = classifyRequest(post(body, modernHeaders("prompts/list")));
    assert.equal(choice.lane === "refused" && choice.id, id);
  }
});

Deno.test("isModernProtocolVersion() takes dates from 2026-07-28 on and nothing else", () => {
  for (const version of ["2026-07-28", "2026-12-01", "2027-01-15"]) {
    assert.equal(isModernProtocolVersion(version), true, version);
  }
  for (const version of ["2025-11-25", "2024-10-07", "v999.0.0", "banana", "2026-07-28x", ""]) {
    assert.equal(isModernProtocolVersion(version), false, version);
  }
});

Deno.test("encodeHeaderValue() keeps plain ASCII and base64-encodes the rest, decodeHeaderValue() reverses it", () => {
  const cases: [string, string][] = [
    ["echo", "echo"],
    ["a b", "a b"],
    [" padded ", "=?base64?IHBhZGRlZCA=?="],
    ["café ☕", "=?base64?Y2Fmw6kg4piV?="],
    ["=?base64?eA==?=", "=?base64?PT9iYXNlNjQ/ZUE9PT89?="],
    ["", "=?base64??="],
  ];
  for (const [value, header] of cases) {
    assert.equal(encodeHeaderValue(value), header, value);
    assert.equal(decodeHeaderValue(header), value, header);
  }
  assert.equal(decodeHeaderValue("=?base64?SGVsbG8"), "=?base64?SGVsbG8", "no end marker: literal");
  assert.equal(decodeHeaderValue("=?base64?/w==?="), undefined, "not UTF-8");
});

Deno.test("REMOVED_METHODS and CACHEABLE_METHODS list what 2026-07-28 removed and caches", () => {
  assert.deepEqual(REMOVED_METHODS, [
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
  ]);
  assert.equal(CACHEABLE_METHODS.length, 6);
  assert.equal(isCacheableMethod("resources/read"), true);
  assert.equal(isCacheableMethod("tools/call"), false);
});
