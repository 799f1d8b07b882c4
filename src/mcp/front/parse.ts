/** Turns a client's POST body into one JSON-RPC message, or the error response to send. */
import { type Classified, classify, RpcErrorCode } from "../protocol/jsonrpc.ts";
import { rpcError } from "./http_util.ts";
import { isObject } from "../translate/json_shape.ts";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../../core/json_depth.ts";

export function parseClientMessage(text: string): Classified | Response {
  const value = parseJsonBody(text);
  return value instanceof Response ? value : classifyClientMessage(value);
}

/**
 * The body as JSON, or the 400 to answer: Parse error, or a body nested deeper than
 * `MAX_JSON_DEPTH` (json_depth.ts), refused before anything walks it. Every lane reads its
 * client's body here: the session and stateless lanes, and legacy SSE's /message.
 */
export function parseJsonBody(text: string): unknown {
  if (nestsDeeperThan(text)) {
    return rpcError(
      400,
      RpcErrorCode.invalidRequest,
      "Invalid Request: the body nests arrays and objects more than " +
        `${MAX_JSON_DEPTH} levels deep; send the arguments with less nesting (no MCP message ` +
        "needs this many)",
    );
  }
  try {
    return JSON.parse(text);
  } catch {
    return rpcError(400, RpcErrorCode.parseError, "Parse error: the body is not valid JSON");
  }
}

/** A parsed body as one JSON-RPC message of a session, or the 400 to answer. */
export function classifyClientMessage(value: unknown): Classified | Response {
  if (Array.isArray(value)) {
    return rpcError(
      400,
      RpcErrorCode.invalidRequest,
      "Invalid Request: JSON-RPC batches are not supported (MCP 2025-06-18 removed them); send one message per request",
    );
  }
  const classified = classify(value);
  if (!classified) {
    return rpcError(
      400,
      RpcErrorCode.invalidRequest,
      'Invalid Request: expected a JSON-RPC 2.0 request, notification or response ("jsonrpc": "2.0")',
    );
  }
  return classified;
}

/**
 * What is missing or wrong in an `initialize` request's params, as the JSON-RPC error message
 * to answer with; undefined when they have what a session needs. The gateway checks this itself
 * before it starts a backend: a backend's own refusal would leave a session that can never be
 * used, and SDK servers phrase it as a schema library's dump.
 */
export function initializeParamsProblem(params: unknown): string | undefined {
  if (!isObject(params)) {
    return "initialize needs params: an object with protocolVersion, capabilities and clientInfo";
  }
  if (typeof params.protocolVersion !== "string") {
    return 'initialize needs params.protocolVersion (a string such as "2025-11-25")';
  }
  if (!isObject(params.capabilities)) {
    return "initialize needs params.capabilities (an object, {} when the client offers none)";
  }
  const { clientInfo } = params;
  if (!isObject(clientInfo)) {
    return "initialize needs params.clientInfo (an object with the client's name and version)";
  }
  if (typeof clientInfo.name !== "string") {
    return "initialize needs params.clientInfo.name (a string naming the client)";
  }
  if (typeof clientInfo.version !== "string") {
    return 'initialize needs params.clientInfo.version (a string such as "1.0.0")';
  }
  return undefined;
}
