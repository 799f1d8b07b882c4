/**
 * What a session checks before a tools/call reaches its backend, in order: the tool gate (may
 * this caller use the tool at all), approvals (does the call wait for a person's yes:
 * approvals/call_hold.ts), then tool integrity (is the tool's definition held), which runs
 * after an approval too, so a tool held while its call waited does not run. A call that no
 * check concerns is never awaited.
 */
import type { JSONRPCMessage } from "../../sdk.ts";
import type { ToolGate } from "../../core/tool_gate.ts";
import type { RpcRequest, RpcResponse } from "../protocol/jsonrpc.ts";
import { toolRefusal } from "../tools/tool_gate.ts";
import { uiReadRefusal } from "../tools/ui_gate.ts";
import { uiUriKey } from "../protocol/mcp_apps.ts";
import { SessionTools } from "../tools/session_tools.ts";
import type { ClientSide, SessionHolds } from "../approvals/call_hold.ts";
import { OwnRequests } from "../tools/own_requests.ts";
import type { ServerConfig } from "../../config/types.ts";
import type { Clock } from "../../core/clock.ts";
import type { ToolIntegrity } from "../tools/tool_integrity.ts";

type Maybe<T> = T | Promise<T>;

export interface CallChecks {
  server: string;
  /** The requests the session sends its backend itself (listing tools before judging a call). */
  own: OwnRequests;
  gate?: ToolGate;
  holds?: SessionHolds;
  tools?: SessionTools;
  /** One page of the backend's tools/list, asked by the gateway itself. */
  list?(cursor?: string): Promise<RpcResponse>;
}

/** What of a session's options its checks are made from (session.ts's `SessionOptions`). */
interface CheckOptions {
  server: ServerConfig;
  clock: Clock;
  requestTimeoutMs: number;
  toolGate?: ToolGate;
  toolIntegrity?: ToolIntegrity;
  holds?: (side: ClientSide) => SessionHolds;
}

/** A session's checks, from its options; `side` is how they reach its client and backend. */
export function callChecks(
  options: CheckOptions,
  side: ClientSide & { send(message: JSONRPCMessage): Promise<void> },
): CallChecks {
  const own = new OwnRequests(options.clock, options.requestTimeoutMs);
  const list = (cursor?: string) =>
    own.ask(side.send, "tools/list", cursor === undefined ? {} : { cursor });
  const tools = options.toolIntegrity &&
    new SessionTools(options.toolIntegrity, options.server, {
      tell: (message) => side.deliver(message),
      ask: own,
      send: side.send,
    });
  return {
    server: options.server.name,
    own,
    gate: options.toolGate,
    tools,
    list,
    holds: options.holds?.({ ...side, list }),
  };
}

/** The answer refusing `request`, or undefined when it may go to the backend. */
export function callRefusal(
  request: RpcRequest,
  checks: CallChecks,
): Maybe<JSONRPCMessage | undefined> {
  if (request.method === "resources/read" || request.method === "resources/subscribe") {
    // A UI (MCP Apps) only tools the caller may not use show is not read (nor watched) either,
    // as through an aggregate.
    return checks.gate && checks.list && uiUriKey(request.params?.uri) !== undefined
      ? uiReadRefusal(request, checks.gate, checks.server, checks.list)
      : undefined;
  }
  if (request.method !== "tools/call") return undefined;
  const name = request.params?.name;
  if (checks.gate && !(typeof name === "string" && checks.gate.allows(name))) {
    return toolRefusal(request.id, name, checks.server);
  }
  const held = checks.holds?.check(request);
  if (held === undefined) return integrity(request, checks);
  return (async () => {
    const verdict = held instanceof Promise ? await held : held;
    if (!verdict) return await integrity(request, checks);
    if ("answer" in verdict) return verdict.answer;
    const refused = await integrity(request, checks);
    if (refused) {
      await checks.holds!.end(verdict.approved, "the tool's definition is held for review");
      return refused;
    }
    return await checks.holds!.use(verdict.approved, request.id);
  })();
}

function integrity(request: RpcRequest, checks: CallChecks): Maybe<JSONRPCMessage | undefined> {
  return checks.tools?.callRefusal(request.id, request.params?.name);
}
