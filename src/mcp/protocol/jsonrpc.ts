/**
 * JSON-RPC 2.0 as MCP uses it: classifying raw values, building error responses, and keys for
 * request ids (`1` and `"1"` are different ids).
 */
import type { JSONRPCMessage, RequestId } from "../../sdk.ts";

export type { JSONRPCMessage, RequestId };

export interface RpcRequest {
  jsonrpc: "2.0";
  id: RequestId;
  method: string;
  params?: Record<string, unknown>;
}
export interface RpcNotification {
  jsonrpc: "2.0";
  method: string;
  params?: Record<string, unknown>;
}
export interface RpcResponse {
  jsonrpc: "2.0";
  id: RequestId;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

export type Classified =
  | { kind: "request"; message: RpcRequest }
  | { kind: "notification"; message: RpcNotification }
  | { kind: "response"; message: RpcResponse };

/** Standard and MCP error codes the gateway itself produces. */
export const RpcErrorCode = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** Gateway-level failure: backend gone, timeout, limit. */
  backendError: -32000,
  requestTimeout: -32001,
  /** What the SDK servers answer for an unknown session. */
  sessionNotFound: -32001,
} as const;

function isId(value: unknown): value is RequestId {
  return typeof value === "string" || (typeof value === "number" && Number.isFinite(value));
}

function isParams(value: unknown): boolean {
  return value === undefined || (typeof value === "object" && value !== null);
}

/** Sorts a parsed JSON value into a request, notification or response; undefined if none. */
export function classify(value: unknown): Classified | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const m = value as Record<string, unknown>;
  if (isRequest(m)) return { kind: "request", message: m };
  if (isNotification(m)) return { kind: "notification", message: m };
  if (isResponse(m)) return { kind: "response", message: m };
  return undefined;
}

type Fields = Record<string, unknown>;

function isCall(m: Fields): boolean {
  return m.jsonrpc === "2.0" && typeof m.method === "string" && isParams(m.params);
}

function isRequest(m: Fields): m is Fields & RpcRequest {
  return isCall(m) && "id" in m && isId(m.id);
}

function isNotification(m: Fields): m is Fields & RpcNotification {
  return isCall(m) && !("id" in m);
}

function isResponse(m: Fields): m is Fields & RpcResponse {
  if (m.jsonrpc !== "2.0" || typeof m.method === "string") return false;
  if (!isId(m.id) || ("result" in m) === ("error" in m)) return false;
  if (!("error" in m)) return true;
  const error = m.error as Fields | null;
  return !!error && typeof error.code === "number" && typeof error.message === "string";
}

/**
 * Why `classify` refused a parsed JSON value, as the end of one sentence ("… is not valid
 * JSON-RPC 2.0: its "id" must be a string or a number"). Checks in the order `classify` does.
 */
export function whyNotJsonRpc(value: unknown): string {
  if (Array.isArray(value)) return "it is an array (a batch); write one message per line";
  if (typeof value !== "object" || value === null) return "it is not a JSON object";
  const m = value as Record<string, unknown>;
  if (m.jsonrpc !== "2.0") return 'its "jsonrpc" must be "2.0"';
  if ("method" in m && typeof m.method !== "string") return 'its "method" must be a string';
  if (typeof m.method === "string") {
    if (!isParams(m.params)) return 'its "params" must be an object or an array';
    return 'its "id" must be a string or a number';
  }
  if (!("id" in m)) return 'it has neither a "method" nor an "id"';
  if (!isId(m.id)) return 'its "id" must be a string or a number';
  if (("result" in m) === ("error" in m)) {
    return 'a response must have "result" or "error", not both or neither';
  }
  return 'its "error" must be an object with a numeric "code" and a string "message"';
}

/** The answer to a request whose id another request of the same session still waits under. */
export function idInFlightMessage(id: RequestId): string {
  const shown = JSON.stringify(id);
  return `a request with id ${shown} is already in flight in this session; use a new id`;
}

export function idKey(id: RequestId): string {
  return typeof id === "number" ? `n${id}` : `s${id}`;
}

/** A JSON-RPC error answer; `id` is null when the request's id could not be read. */
export interface RpcErrorResponse {
  jsonrpc: "2.0";
  id: RequestId | null;
  error: { code: number; message: string; data?: unknown };
}

/** The error answer to a request, as a message for a client or backend connection. */
export function errorResponse(
  id: RequestId,
  code: number,
  message: string,
  data?: unknown,
): JSONRPCMessage {
  return { jsonrpc: "2.0", id, error: errorBody(id, code, message, data).error };
}

/** The error answer as an HTTP body, which may carry a null id (JSON-RPC 2.0 §5). */
export function errorBody(
  id: RequestId | null,
  code: number,
  message: string,
  data?: unknown,
): RpcErrorResponse {
  const error = data === undefined ? { code, message } : { code, message, data };
  return { jsonrpc: "2.0", id, error };
}
