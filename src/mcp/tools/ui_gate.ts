/**
 * A tool the caller may not use takes its UI (MCP Apps) along on a server's own URL too: a
 * `resources/read` of a `ui://` URI that only such tools name is refused by the gateway, as an
 * aggregate refuses it (mcp/aggregate/discovery.ts). The session lists the server's tools itself
 * to know whose UI a URI is, so it does not matter whether its client listed them first; a
 * server whose tools cannot be listed has no tool to withhold a UI for, and the read goes on.
 */
import type { JSONRPCMessage } from "../../sdk.ts";
import type { ToolGate } from "../../core/tool_gate.ts";
import { errorResponse, type RpcRequest, type RpcResponse } from "../protocol/jsonrpc.ts";
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
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await list(cursor).catch(() => undefined);
    const result = answer?.result;
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
  if (shown || !withheld) return undefined;
  return errorResponse(
    request.id,
    ModernErrorCode.invalidParams,
    `the resource ${
      String(uri).slice(0, 200)
    } is the interface of a tool that is not available to you on the server "${server}"`,
    { reason: "tool_not_allowed" },
  );
}
