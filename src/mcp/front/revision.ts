/**
 * Which protocol revision, and so which lane, serves one request at `/{server}/mcp`: the
 * session lane (2025-11-25 and older: `initialize`, `Mcp-Session-Id`, GET, DELETE), the
 * stateless lane (2026-07-28: `_meta` on every request) with the request's envelope checked,
 * or the refusal to answer. Decided once per request, from the body first and the headers as a
 * cross-check, in the order of the 2026-07-28 transport ("Backward Compatibility", "Server
 * Validation") as the v2 SDK applies it. Pure: no I/O.
 */
import {
  type RequestId,
  RpcErrorCode,
  type RpcNotification,
  type RpcRequest,
} from "../protocol/jsonrpc.ts";
import {
  isModernProtocolVersion,
  isSupportedModernProtocolVersion,
  type LogLevel,
  MetaKey,
  ModernErrorCode,
  ModernHeader,
  NAME_HEADER_SOURCE,
  removedMethodReplacement,
  SESSION_PROTOCOL_VERSIONS,
} from "../protocol/protocol_versions.ts";
import {
  badClaim,
  envelopeProblem,
  type Fields,
  headerMismatch,
  type HeaderReader,
  isValidModernClaim,
  missingClaim,
  missingHeader,
  nameHeaderProblem,
  quote,
  readHeader,
  type Refusal,
  refuse,
  trimOws,
  unsupportedVersion,
  versionMismatch,
} from "./envelope.ts";
import { metaOf } from "../translate/json_shape.ts";

export type { HeaderReader, Refusal };

export interface IncomingRequest {
  /** The HTTP method. */
  method: string;
  headers: HeaderReader;
  /** The parsed JSON body; undefined for GET and DELETE. */
  body?: unknown;
}

/** 2025-11-25 and older: the request goes where it goes today. */
export interface SessionLane {
  readonly lane: "session";
  /** `MCP-Protocol-Version` as read here (null when absent), so the lane need not read it. */
  readonly protocolVersionHeader: string | null;
}

export interface ClientInfo {
  name: string;
  version: string;
  [field: string]: unknown;
}

/** A 2026-07-28 request whose `_meta` and headers are complete and agree. */
export interface StatelessEnvelope {
  protocolVersion: string;
  clientCapabilities: Record<string, unknown>;
  clientInfo?: ClientInfo;
  logLevel?: LogLevel;
  /** The JSON-RPC method. */
  method: string;
  /** `params.name` of tools/call and prompts/get, `params.uri` of resources/read. */
  name?: string;
  id: RequestId;
}

export interface StatelessRequest {
  lane: "stateless";
  kind: "request";
  envelope: StatelessEnvelope;
  message: RpcRequest;
}

/**
 * A 2026-07-28 notification: the front answers 202 and acts on `notifications/cancelled`
 * alone, the one client notification the revision has; any other is dropped, as JSON-RPC lets
 * a receiver do with a notification it does not know.
 */
export interface StatelessNotification {
  lane: "stateless";
  kind: "notification";
  protocolVersion: string;
  message: RpcNotification;
}

export type LaneChoice = SessionLane | StatelessRequest | StatelessNotification | Refusal;

// One shared answer per usual header value: a 2025 request allocates nothing here.
const NO_HEADER: SessionLane = Object.freeze({ lane: "session", protocolVersionHeader: null });
const SESSION_LANES = new Map<string, SessionLane>(
  SESSION_PROTOCOL_VERSIONS.map((version) => [
    version,
    Object.freeze({ lane: "session", protocolVersionHeader: version }),
  ]),
);

function sessionLane(header: string | null): SessionLane {
  if (header === null) return NO_HEADER;
  return SESSION_LANES.get(header) ?? { lane: "session", protocolVersionHeader: header };
}

/**
 * The lane for one request. A 2025 request (no `_meta` claim, no 2026 `MCP-Protocol-Version`)
 * costs one header read and a few property reads; `Mcp-Method` and `Mcp-Name` are read only
 * on the way to the stateless lane. A body that is not JSON-RPC goes to the session lane,
 * whose parser answers it (-32600) as before.
 */
export function classifyRequest(request: IncomingRequest): LaneChoice {
  const rawHeader = request.headers.get(ModernHeader.protocolVersion);
  // GET (the standalone stream) and DELETE are session operations; 2026-07-28 is POST only.
  if (request.method !== "POST") return sessionLane(rawHeader);
  const body = request.body;
  if (typeof body !== "object" || body === null) return sessionLane(rawHeader);
  if (Array.isArray(body)) return classifyBatch(body, rawHeader);
  const m = body as Fields;
  if (m.jsonrpc !== "2.0") return sessionLane(rawHeader);

  const header = rawHeader === null ? null : trimOws(rawHeader);
  const modernHeader = header !== null && isModernProtocolVersion(header);
  if (typeof m.method !== "string") {
    if (!("result" in m || "error" in m)) return sessionLane(rawHeader);
    // A response answers a server's request inside a 2025 session; 2026 has none.
    const claimed = metaOf(m.result)?.[MetaKey.protocolVersion] !== undefined;
    return modernHeader || claimed ? postedResponse() : sessionLane(rawHeader);
  }
  if (m.params !== undefined && (typeof m.params !== "object" || m.params === null)) {
    return sessionLane(rawHeader);
  }
  const meta = metaOf(m.params);
  const claim = meta?.[MetaKey.protocolVersion];
  if (claim === undefined && !modernHeader) return sessionLane(rawHeader);

  if (!("id" in m)) {
    return classifyNotification(m as Fields & RpcNotification, claim, header, request);
  }
  if (!isId(m.id)) return sessionLane(rawHeader);
  const message = m as Fields & RpcRequest;
  // initialize opens a 2025 session, unless a sound 2026 claim makes it a 2026 request (for
  // which initialize is a removed method, answered below like the others).
  if (message.method === "initialize" && !isValidModernClaim(meta)) {
    return modernHeader ? initializeWithModernHeader(header!, message.id) : sessionLane(rawHeader);
  }
  if (claim === undefined) return missingClaim(meta, header!, message.id);
  return classifyModernRequest(message, meta!, header, request.headers);
}

/** The checks in the SDK's order: envelope, header against body, version, presence, method. */
function classifyModernRequest(
  message: RpcRequest,
  meta: Fields,
  header: string | null,
  headers: HeaderReader,
): StatelessRequest | Refusal {
  const { id, method } = message;
  const problem = envelopeProblem(meta, id);
  if (problem) return problem;
  const version = meta[MetaKey.protocolVersion] as string;
  if (header !== null && header !== version) return versionMismatch(header, version, id);
  const methodHeader = readHeader(headers, ModernHeader.method);
  if (methodHeader !== null && methodHeader !== method) {
    return headerMismatch("Mcp-Method", methodHeader, method, "the body's method", id);
  }
  if (!isSupportedModernProtocolVersion(version)) return unsupportedVersion(version, id);
  if (header === null) {
    return missingHeader("MCP-Protocol-Version", version, "the version in params._meta", id);
  }
  if (methodHeader === null) return missingHeader("Mcp-Method", method, "the body's method", id);
  const field = Object.hasOwn(NAME_HEADER_SOURCE, method) ? NAME_HEADER_SOURCE[method] : undefined;
  const value = field === undefined ? undefined : message.params?.[field];
  // No name in the body: nothing for Mcp-Name to mirror; the params check further on answers.
  const name = typeof value === "string" ? value : undefined;
  if (name !== undefined) {
    const nameHeader = readHeader(headers, ModernHeader.name);
    const mismatch = nameHeaderProblem(nameHeader, field!, name, id);
    if (mismatch) return mismatch;
  }
  const replacement = removedMethodReplacement(method);
  if (replacement !== undefined) {
    const text = `Method not found: ${method} does not exist in MCP ${version}; ${replacement}`;
    return refuse(404, RpcErrorCode.methodNotFound, text, undefined, id);
  }
  const envelope: StatelessEnvelope = {
    protocolVersion: version,
    clientCapabilities: meta[MetaKey.clientCapabilities] as Record<string, unknown>,
    method,
    id,
  };
  const clientInfo = meta[MetaKey.clientInfo] as ClientInfo | undefined;
  const logLevel = meta[MetaKey.logLevel] as LogLevel | undefined;
  if (clientInfo !== undefined) envelope.clientInfo = clientInfo;
  if (logLevel !== undefined) envelope.logLevel = logLevel;
  if (name !== undefined) envelope.name = name;
  return { lane: "stateless", kind: "request", envelope, message };
}

/**
 * A notification with a claim or a 2026 header. It needs no envelope (2026-07-28 requires one
 * on requests) and its headers are compared when present, not required.
 */
function classifyNotification(
  message: RpcNotification,
  claim: unknown,
  header: string | null,
  request: IncomingRequest,
): StatelessNotification | Refusal {
  if (claim !== undefined && typeof claim !== "string") return badClaim(null);
  const version = (claim ?? header) as string;
  if (header !== null && header !== version) return versionMismatch(header, version, null);
  const methodHeader = readHeader(request.headers, ModernHeader.method);
  if (methodHeader !== null && methodHeader !== message.method) {
    return headerMismatch("Mcp-Method", methodHeader, message.method, "the body's method", null);
  }
  if (!isSupportedModernProtocolVersion(version)) return unsupportedVersion(version, null);
  return { lane: "stateless", kind: "notification", protocolVersion: version, message };
}

/** A batch is 2025 traffic (the session lane refuses batches as before) without a 2026 claim. */
function classifyBatch(batch: unknown[], rawHeader: string | null): SessionLane | Refusal {
  const at = batch.findIndex((element) =>
    typeof element === "object" && element !== null &&
    metaOf((element as Fields).params)?.[MetaKey.protocolVersion] !== undefined
  );
  if (at < 0) return sessionLane(rawHeader);
  return refuse(
    400,
    RpcErrorCode.invalidRequest,
    `Invalid Request: a JSON-RPC batch may not hold an MCP 2026-07-28 message (batch[${at}] ` +
      `carries ${MetaKey.protocolVersion} in params._meta); send each message in its own POST`,
  );
}

function postedResponse(): Refusal {
  return refuse(
    400,
    RpcErrorCode.invalidRequest,
    "Invalid Request: an MCP 2026-07-28 client posts no JSON-RPC responses (a server asks for " +
      "input with an input_required result); retry the original request with " +
      "params.inputResponses instead",
  );
}

function initializeWithModernHeader(header: string, id: RequestId): Refusal {
  return refuse(
    400,
    ModernErrorCode.headerMismatch,
    `Bad Request: initialize opens an MCP 2025 session, but the MCP-Protocol-Version header ` +
      `names ${quote(header)}; send initialize with a 2025 MCP-Protocol-Version (or none), or, ` +
      `for 2026-07-28, skip initialize and send server/discover with params._meta`,
    { header: "MCP-Protocol-Version", received: header },
    id,
  );
}

function isId(value: unknown): value is RequestId {
  return typeof value === "string" || (typeof value === "number" && Number.isFinite(value));
}
