/**
 * Answers between revisions. Toward a 2026 client, every answer of a 2025 backend gets what
 * 2026 requires of it: `resultType`, cache hints on the cacheable methods, the server's
 * identity in `_meta`, and no retired `-32002`. Toward a 2025 client, a 2026 answer passes as
 * it is (2025 readers ignore the new fields) except where a 2025 schema refuses the whole
 * message: a non-object `outputSchema` in `tools/list` and a non-object `structuredContent`.
 */
import type { RpcResponse } from "../protocol/jsonrpc.ts";
import { isObject, type Json, without } from "./json_shape.ts";
import { CACHEABLE_METHODS, MetaKey, ModernErrorCode } from "../protocol/protocol_versions.ts";

type RpcError = NonNullable<RpcResponse["error"]>;

/**
 * The 2026 form of a 2025 result of `method`. Cache hints are the safe ones (`ttlMs: 0`,
 * `cacheScope: "private"`: a 2025 backend gives no hint, and its answers may be per person);
 * whatever the result already carries is kept.
 */
export function resultFor2026(method: string, result: Json, serverInfo?: Json): Json {
  const out: Json = { ...result };
  if (!("resultType" in out)) out.resultType = "complete";
  if (CACHEABLE_METHODS.includes(method)) {
    if (!("ttlMs" in out)) out.ttlMs = 0;
    if (!("cacheScope" in out)) out.cacheScope = "private";
  }
  const meta = isObject(out._meta) ? out._meta : {};
  if (serverInfo && !(MetaKey.serverInfo in meta)) {
    out._meta = { ...meta, [MetaKey.serverInfo]: serverInfo };
  }
  return out;
}

/** The 2026 form of a 2025 error: `-32002` (resource not found) becomes `-32602`, data kept. */
export function errorFor2026(error: RpcError): RpcError {
  if (error.code !== ModernErrorCode.legacyResourceNotFound) return error;
  return { ...error, code: ModernErrorCode.invalidParams };
}

/** A 2025 backend's response to a request of `method`, as a 2026 client must get it. */
export function responseFor2026(
  method: string,
  response: RpcResponse,
  serverInfo?: Json,
): RpcResponse {
  if (response.error) return { ...response, error: errorFor2026(response.error) };
  return { ...response, result: resultFor2026(method, response.result ?? {}, serverInfo) };
}

/**
 * The 2025 form of a complete 2026 result of `method` (an `input_required` one never reaches
 * a 2025 client: see input_relay.ts). Kept: `resultType`, `ttlMs`, `cacheScope` and
 * `_meta` with its serverInfo, all of which a 2025 reader ignores.
 */
export function resultFor2025(method: string, result: Json): Json {
  if (method === "tools/list" && Array.isArray(result.tools)) {
    return { ...result, tools: result.tools.map(toolFor2025) };
  }
  if (method === "tools/call" && "structuredContent" in result) {
    // 2026 allows any JSON value here (SEP-2106); 2025 readers refuse the whole result unless
    // it is an object. The text content still carries the value.
    if (!isObject(result.structuredContent)) return without(result, ["structuredContent"]);
  }
  return result;
}

/** 2025 requires `outputSchema.type` to be "object"; a 2026 schema of another shape is left out. */
function toolFor2025(tool: unknown): unknown {
  if (!isObject(tool) || !("outputSchema" in tool)) return tool;
  const schema = tool.outputSchema;
  if (isObject(schema) && schema.type === "object") return tool;
  return without(tool, ["outputSchema"]);
}

/** A 2026 backend's response to a request of `method`, as a 2025 client must get it. */
export function responseFor2025(method: string, response: RpcResponse): RpcResponse {
  if (response.error || !response.result) return response;
  return { ...response, result: resultFor2025(method, response.result) };
}
