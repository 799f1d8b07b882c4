/** Turns a client's POST body into one JSON-RPC message, or the error response to send. */
import { type Classified, classify, RpcErrorCode } from "../jsonrpc.ts";
import { rpcError } from "./http_util.ts";

export function parseClientMessage(text: string): Classified | Response {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return rpcError(400, RpcErrorCode.parseError, "Parse error: the body is not valid JSON");
  }
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
