/**
 * What a process shared by everyone (`share: all`) must not carry from one person to another,
 * beyond what shared_inputs.ts refuses: tasks (2025-11-25). A task outlives its request and is
 * found again by id, or listed (`tasks/list`), so one person could read another's results: on
 * everyone's process the `tasks` capability is not shown, task requests are refused, and a
 * call asked to run as a task runs as a plain call.
 */
import { errorResponse, RpcErrorCode, type RpcRequest } from "../protocol/jsonrpc.ts";
import type { JSONRPCMessage } from "../../sdk.ts";

/** The process's `initialize` result as a session on everyone's process sees it. */
export function declaredToEveryone(declared: Record<string, unknown>): Record<string, unknown> {
  const capabilities = declared.capabilities as Record<string, unknown> | undefined;
  if (!capabilities || !("tasks" in capabilities)) return declared;
  const { tasks: _tasks, ...rest } = capabilities;
  return { ...declared, capabilities: rest };
}

/** A request refused on everyone's process, answered here; undefined for one that may go on. */
export function refusedForEveryone(request: RpcRequest): JSONRPCMessage | undefined {
  if (!request.method.startsWith("tasks/")) return undefined;
  return errorResponse(
    request.id,
    RpcErrorCode.methodNotFound,
    `${request.method} is not available: this server's process is shared by everyone (share: all), and tasks would be too`,
  ) as JSONRPCMessage;
}

/** `request` without a task to run as (it then runs, and is answered, as a plain call). */
export function withoutTask(request: RpcRequest): RpcRequest {
  if (!request.params || !("task" in request.params)) return request;
  const { task: _task, ...params } = request.params;
  return { ...request, params };
}
