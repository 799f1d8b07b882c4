/**
 * A tool the caller may not use takes its UI (MCP Apps) along on a server's own URL too: a
 * `resources/read` of a `ui://` URI that only such tools name is refused by the gateway, as an
 * aggregate refuses it (mcp/aggregate/discovery.ts). The session lists the server's tools itself
 * to know whose UI a URI is, so it does not matter whether its client listed them first. A server
 * that answers the listing with an error (it has no tools) has no tool to withhold a UI for, and
 * the read goes on; a listing that gets no answer at all (the backend timed out or went away)
 * cannot tell, and the read is refused for now rather than risk serving a withheld tool's UI.
 */
import type { JSONRPCMessage } from "../../sdk.ts";
import type { ToolGate } from "../../core/tool_gate.ts";
import {
  errorResponse,
  RpcErrorCode,
  type RpcRequest,
  type RpcResponse,
} from "../protocol/jsonrpc.ts";
import { toolUiUris, uiUriKey } from "../protocol/mcp_apps.ts";
import { ModernErrorCode } from "../protocol/protocol_versions.ts";
import { isObject } from "../translate/json_shape.ts";

/** Pages of tools/list read at most to judge one read. */
const MAX_PAGES = 20;

/** The answer refusing a read (or subscribe) of a withheld tool's UI, or undefined when it may go on. */
export async function uiReadRefusal(
  request: RpcRequest,
  gate: ToolGate,
  server: string,
  list: (cursor?: string) => Promise<RpcResponse>,
): Promise<JSONRPCMessage | undefined> {
  const uri = request.params?.uri;
  // Any spelling the server would read as the same UI (`UI://`, dot segments …) is that UI.
  const key = uiUriKey(uri);
  if (key === undefined) return undefined;
  const names = (tool: Record<string, unknown>) =>
    toolUiUris(tool).some((named) => uiUriKey(named) === key);
  let shown = false;
  let withheld = false;
  let unanswered = false;
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await list(cursor).catch(() => undefined);
    if (answer === undefined) {
      unanswered = true;
      break;
    }
    const result = answer.result;
    if (!isObject(result) || !Array.isArray(result.tools)) break;
    for (const tool of result.tools) {
      if (!isObject(tool) || !names(tool)) continue;
      if (typeof tool.name === "string" && gate.allows(tool.name)) shown = true;
      else withheld = true;
    }
    cursor = typeof result.nextCursor === "string" && result.nextCursor
      ? result.nextCursor
      : undefined;
    if (!cursor) break;
  }
  if (shown) return undefined;
  if (unanswered) {
    return errorResponse(
      request.id,
      RpcErrorCode.backendError,
      `the resource ${
        String(uri).slice(0, 200)
      } cannot be read now: the server "${server}" did not answer the listing of its tools that ` +
        "tells whose interface it is; try again in a moment",
      { reason: "tools_unavailable" },
    );
  }
  if (!withheld) return undefined;
  return errorResponse(
    request.id,
    ModernErrorCode.invalidParams,
    `the resource ${
      String(uri).slice(0, 200)
    } is the interface of a tool that is not available to you on the server "${server}"`,
    { reason: "tool_not_allowed" },
  );
}
