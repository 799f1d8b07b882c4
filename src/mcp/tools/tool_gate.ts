/**
 * Which tools a session's caller may see and call. The policy (src/policy/) decides; the
 * session applies it at the one place every front transport and both revisions pass: a
 * `tools/call` the gate refuses is answered by the gateway and never reaches the backend, and
 * every `tools/list` answer (a refresh after `list_changed` included) shows only what passes.
 */
import type { JSONRPCMessage } from "../../sdk.ts";
import { errorResponse, type RequestId, type RpcResponse } from "../protocol/jsonrpc.ts";
import { ModernErrorCode } from "../protocol/protocol_versions.ts";
import { isObject } from "../translate/json_shape.ts";
import type { ToolGate } from "../../core/tool_gate.ts";

/** The answer to a refused call: as for a tool the server does not have (-32602). */
export function toolRefusal(id: RequestId, name: unknown, server: string): JSONRPCMessage {
  const shown = typeof name === "string" ? JSON.stringify(name.slice(0, 200)) : "without a name";
  return errorResponse(
    id,
    ModernErrorCode.invalidParams,
    `the tool ${shown} is not available to you on the server "${server}"; ` +
      "list the tools to see those you may use, or ask the gateway's administrators for access",
    { reason: "tool_not_allowed" },
  );
}

/** `response` to tools/list with only the tools `gate` lets through. */
export function visibleTools(response: RpcResponse, gate: ToolGate): RpcResponse {
  const result = response.result;
  if (!isObject(result) || !Array.isArray(result.tools)) return response;
  const tools = result.tools.filter((tool) =>
    isObject(tool) && typeof tool.name === "string" && gate.allows(tool.name)
  );
  if (tools.length === result.tools.length) return response;
  return { ...response, result: { ...result, tools } };
}
