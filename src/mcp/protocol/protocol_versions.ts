/**
 * The MCP protocol revisions the gateway speaks, and every rule that depends on which one is
 * in use: what initialize agrees on, which `MCP-Protocol-Version` headers pass, what a
 * revision's streams look like; and for the stateless revisions (2026-07-28 on), the `_meta`
 * keys, error codes, headers, removed and cacheable methods. Front, backends, aggregates and
 * translation ask here instead of comparing date strings of their own, so a new revision is
 * added in this one file.
 */
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "../../sdk.ts";

/** The session revisions (those opened by `initialize`), newest first. */
export const SESSION_PROTOCOL_VERSIONS: readonly string[] = [...SUPPORTED_PROTOCOL_VERSIONS];

/** The newest session revision: offered when a client asks for one the gateway lacks. */
export const LATEST_SESSION_PROTOCOL_VERSION: string = LATEST_PROTOCOL_VERSION;

/**
 * The revision a session speaks before initialize has agreed on one: a client that sends no
 * `MCP-Protocol-Version` header is taken to speak this (MCP 2025-06-18, "Protocol Version
 * Header").
 */
export const ASSUMED_PROTOCOL_VERSION = "2025-03-26";

/** Since this revision a POST's SSE stream opens with an empty priming event (SEP-1699). */
const PRIMING_SINCE = "2025-11-25";

export function isSupportedProtocolVersion(version: string): boolean {
  return SESSION_PROTOCOL_VERSIONS.includes(version);
}

/**
 * The revision to answer `initialize` with: the one asked for when the gateway speaks it,
 * otherwise the newest (the client then decides whether it can go on).
 */
export function negotiateProtocolVersion(requested: unknown): string {
  return typeof requested === "string" && isSupportedProtocolVersion(requested)
    ? requested
    : LATEST_SESSION_PROTOCOL_VERSION;
}

/** Whether a client of this revision expects the priming event on a new SSE stream. */
export function expectsPrimingEvent(version: string): boolean {
  return version >= PRIMING_SINCE;
}

/**
 * What is wrong with a request's `MCP-Protocol-Version` header, or undefined when it may pass.
 * No header is allowed: the client then speaks `ASSUMED_PROTOCOL_VERSION`.
 */
export function protocolVersionHeaderProblem(header: string | null): string | undefined {
  if (header === null || isSupportedProtocolVersion(header)) return undefined;
  return `Bad Request: unsupported MCP-Protocol-Version "${header.slice(0, 40)}"; ` +
    `this gateway speaks ${SESSION_PROTOCOL_VERSIONS.join(", ")}`;
}

// ---- MCP 2026-07-28 and later: no initialize, no session, `_meta` on every request ----

/** The stateless revisions the gateway serves, newest first (`server/discover`'s list). */
export const MODERN_PROTOCOL_VERSIONS: readonly string[] = ["2026-07-28"];

/**
 * Every revision a server's URL serves, newest first: the stateless ones on their own, the
 * session ones after `initialize`. What a -32022 refusal lists as `supported`, so a client
 * that speaks both eras learns it may fall back to a session.
 */
export function servedProtocolVersions(): string[] {
  return [...MODERN_PROTOCOL_VERSIONS, ...SESSION_PROTOCOL_VERSIONS];
}

/** The first revision without sessions: every later date is stateless too. */
const MODERN_SINCE = "2026-07-28";

/** A revision is a date, `YYYY-MM-DD`. */
const REVISION_SHAPE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Whether `version` names a stateless revision (2026-07-28 or later), whether or not the
 * gateway serves it. Only a date counts: unlike the SDK's bare `v >= "2026-07-28"`, a header
 * such as `banana` or `v999.0.0` on a request without a `_meta` claim stays on the session
 * lane, which answers it as before (400, "unsupported MCP-Protocol-Version").
 */
export function isModernProtocolVersion(version: string): boolean {
  // The comparison first: it settles every 2025 version without the pattern.
  return version >= MODERN_SINCE && REVISION_SHAPE.test(version);
}

export function isSupportedModernProtocolVersion(version: string): boolean {
  return MODERN_PROTOCOL_VERSIONS.includes(version);
}

/** The error codes 2026-07-28 defines (the range -32020…-32099 is the spec's alone). */
export const ModernErrorCode = {
  /** A required header is missing or malformed, or disagrees with the body (HTTP 400). */
  headerMismatch: -32020,
  /** The request needs a capability its `_meta` did not declare (HTTP 400). */
  missingRequiredClientCapability: -32021,
  /** The `_meta` and header version is one the server does not serve (HTTP 400). */
  unsupportedProtocolVersion: -32022,
  /** Invalid params: also "resource not found" and a refused `requestState` in 2026. */
  invalidParams: -32602,
  /** Retired in 2026 (MUST NOT be emitted): resource not found, now -32602. */
  legacyResourceNotFound: -32002,
} as const;

/**
 * The HTTP status of a 2026-07-28 answer carrying `errorCode`: 404 for a method the server
 * lacks, 400 for the errors the revision says are the request's fault before any handler ran
 * (headers, capabilities, version), 200 for everything answered in band.
 */
export function modernHttpStatus(errorCode: number | undefined): number {
  if (errorCode === -32601) return 404;
  if (
    errorCode === ModernErrorCode.headerMismatch ||
    errorCode === ModernErrorCode.missingRequiredClientCapability ||
    errorCode === ModernErrorCode.unsupportedProtocolVersion
  ) return 400;
  return 200;
}

/** The reserved `_meta` keys of 2026-07-28. */
export const MetaKey = {
  /** Request: the revision of this request; required, equals `MCP-Protocol-Version`. */
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  /** Request: what the client can do for this request; required (`{}` for nothing). */
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  /** Request: `{ name, version }` of the client, for display and logs; optional. */
  clientInfo: "io.modelcontextprotocol/clientInfo",
  /** Request: the lowest level of `notifications/message` wanted; none without it. */
  logLevel: "io.modelcontextprotocol/logLevel",
  /** Result: `{ name, version }` of the server. */
  serverInfo: "io.modelcontextprotocol/serverInfo",
  /** Notification on a `subscriptions/listen` stream: the listen request's id. */
  subscriptionId: "io.modelcontextprotocol/subscriptionId",
} as const;

/** The request `_meta` keys that carry the 2026 envelope (what a 2025 backend never sees). */
export const REQUEST_META_KEYS: readonly string[] = [
  MetaKey.protocolVersion,
  MetaKey.clientCapabilities,
  MetaKey.clientInfo,
  MetaKey.logLevel,
];

/** The requests a 2026 server may answer with `input_required` (and no others). */
const INPUT_TAKING_METHODS: ReadonlySet<string> = new Set([
  "tools/call",
  "prompts/get",
  "resources/read",
]);

export function takesInput(method: string): boolean {
  return INPUT_TAKING_METHODS.has(method);
}

/** The server-to-client requests 2026 carries inside `input_required` instead. */
export const INPUT_METHODS = [
  "elicitation/create",
  "sampling/createMessage",
  "roots/list",
] as const;
export type InputMethod = typeof INPUT_METHODS[number];

export function isInputMethod(method: unknown): method is InputMethod {
  return (INPUT_METHODS as readonly unknown[]).includes(method);
}

/** The `_meta` keys every 2026 request must carry. */
export const REQUIRED_META_KEYS: readonly string[] = [
  MetaKey.protocolVersion,
  MetaKey.clientCapabilities,
];

/** Values of `io.modelcontextprotocol/logLevel`, least severe first (RFC 5424). */
export const LOG_LEVELS = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
] as const;
export type LogLevel = typeof LOG_LEVELS[number];

export function isLogLevel(value: unknown): value is LogLevel {
  return (LOG_LEVELS as readonly unknown[]).includes(value);
}

/** The request headers of 2026-07-28, lower-case as `Headers.get` takes them. */
export const ModernHeader = {
  protocolVersion: "mcp-protocol-version",
  method: "mcp-method",
  name: "mcp-name",
} as const;

/** The methods whose `Mcp-Name` header mirrors a body field, and which field. */
export const NAME_HEADER_SOURCE: Readonly<Record<string, "name" | "uri">> = {
  "tools/call": "name",
  "prompts/get": "name",
  "resources/read": "uri",
};

/** Client methods 2026-07-28 removed (404 / -32601), each with what replaces it. */
const REMOVED: ReadonlyMap<string, string> = new Map([
  [
    "initialize",
    "send server/discover to learn the server, and put clientInfo and clientCapabilities " +
    "in each request's params._meta",
  ],
  ["ping", "there is no ping: any request shows whether the server is alive"],
  ["logging/setLevel", `set ${MetaKey.logLevel} in each request's params._meta`],
  [
    "resources/subscribe",
    "send subscriptions/listen with params.notifications.resourceSubscriptions",
  ],
  ["resources/unsubscribe", "close the subscriptions/listen stream that subscribed"],
]);

export const REMOVED_METHODS: readonly string[] = [...REMOVED.keys()];

/** What a client sends instead of a removed method; undefined for a method that exists. */
export function removedMethodReplacement(method: string): string | undefined {
  return REMOVED.get(method);
}

/** Results that carry `ttlMs` and `cacheScope` (required on them in 2026-07-28). */
export const CACHEABLE_METHODS: readonly string[] = [
  "server/discover",
  "tools/list",
  "prompts/list",
  "resources/list",
  "resources/templates/list",
  "resources/read",
];

export function isCacheableMethod(method: string): boolean {
  return CACHEABLE_METHODS.includes(method);
}

// `Mcp-Name` and `Mcp-Param-*` values that are not plain visible ASCII travel as
// `=?base64?<base64 of the UTF-8 bytes>?=` (markers lower-case and exact).
const SENTINEL_START = "=?base64?";
const SENTINEL_END = "?=";
/** Padded base64 only: the spec's examples and the conformance suite refuse the rest. */
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A header value as the client meant it: the `=?base64?…?=` payload decoded, anything else
 * as it is; undefined when the payload is not padded base64 of UTF-8.
 */
export function decodeHeaderValue(value: string): string | undefined {
  if (!isSentinel(value)) return value;
  const payload = value.slice(SENTINEL_START.length, value.length - SENTINEL_END.length);
  if (!CANONICAL_BASE64.test(payload)) return undefined;
  try {
    return UTF8.decode(Uint8Array.from(atob(payload), (c) => c.charCodeAt(0)));
  } catch {
    return undefined;
  }
}

/** A value as a header carries it: plain when it is visible ASCII, base64 otherwise. */
export function encodeHeaderValue(value: string): string {
  const plain = /^[\x21-\x7e](?:[\x20-\x7e\t]*[\x21-\x7e])?$/.test(value) && !isSentinel(value);
  if (plain) return value;
  const bytes = new TextEncoder().encode(value);
  const binary = Array.from(bytes, (byte) => String.fromCharCode(byte)).join("");
  return `${SENTINEL_START}${btoa(binary)}${SENTINEL_END}`;
}

function isSentinel(value: string): boolean {
  return value.length >= SENTINEL_START.length + SENTINEL_END.length &&
    value.startsWith(SENTINEL_START) && value.endsWith(SENTINEL_END);
}
