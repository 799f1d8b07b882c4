/**
 * The session lane of the Streamable HTTP front: which session a request after `initialize`
 * belongs to. Its `Mcp-Session-Id` is read and checked here and nowhere else, so that a lane
 * without sessions (MCP 2026-07-28) can sit beside this one.
 */
import { parseSessionId, type SessionId } from "../../core/ids.ts";
import { type RequestId, RpcErrorCode } from "../protocol/jsonrpc.ts";
import {
  isModernProtocolVersion,
  protocolVersionHeaderProblem,
} from "../protocol/protocol_versions.ts";
import type { Session } from "../sessions/session.ts";
import type { FrontContext } from "./context.ts";
import { rpcError } from "./http_util.ts";
import { StreamableChannel } from "./streamable_channel.ts";

export const SESSION_HEADER = "mcp-session-id";

/**
 * The caller's session for this request (held here, or continued from another replica), or
 * the answer to give instead: 400 without a session id, 404 for a session the caller does not
 * have (ended, never existed, or someone else's), 400 for an unsupported protocol version.
 * `requestId` is the JSON-RPC request's id, for the error to carry; `versionHeader` is the
 * `MCP-Protocol-Version` header when the caller has read it already (a POST's lane choice).
 */
export async function sessionFor(
  request: Request,
  ctx: FrontContext,
  requestId: RequestId | null = null,
  versionHeader: string | null = request.headers.get("mcp-protocol-version"),
): Promise<Session | Response> {
  const id = sessionIdOf(request, requestId);
  if (id instanceof Response) return id;
  const session = id && await ctx.sessions.find(id, ctx.server, ctx.principal);
  if (!session) return sessionNotFound(requestId);
  // Continued from another replica: its stream state starts here.
  if (!session.channel) attachStreamableChannel(ctx, session);
  const problem = protocolVersionHeaderProblem(versionHeader);
  return problem === undefined ? session : rpcError(400, RpcErrorCode.invalidRequest, problem);
}

/**
 * The session id the request names (undefined when it is not one the gateway could have
 * issued), or the 400 to answer when it names none.
 */
export function sessionIdOf(
  request: Request,
  requestId: RequestId | null = null,
): SessionId | undefined | Response {
  const raw = request.headers.get(SESSION_HEADER);
  if (!raw) {
    return rpcError(
      400,
      RpcErrorCode.backendError,
      "Bad Request: Mcp-Session-Id header is required (send initialize first to get one)",
      requestId,
    );
  }
  return parseSessionId(raw);
}

/**
 * A GET or DELETE from a client of a stateless revision (MCP 2026-07-28 on) without a session:
 * there is no stream to open and no session to end for it, and such a client expects `405`
 * with `Allow: POST` (streamable-http, "Earlier Streamable HTTP Revisions"), as a 2026 server
 * answers; undefined for anyone else, whom the session lane serves as before.
 */
export function statelessMethodRefusal(request: Request): Response | undefined {
  if (request.headers.has(SESSION_HEADER)) return undefined;
  const version = request.headers.get("mcp-protocol-version")?.trim();
  if (version === undefined || !isModernProtocolVersion(version)) return undefined;
  const what = request.method === "DELETE"
    ? "there is no session to end"
    : "there is no GET stream (send subscriptions/listen in a POST for notifications)";
  return rpcError(
    405,
    RpcErrorCode.backendError,
    `Method Not Allowed: MCP ${version} sends every request as a POST; ${what}`,
    null,
    { allow: "POST" },
  );
}

/** Gives a session its Streamable HTTP side: streams, event ids, the replay log. */
export function attachStreamableChannel(ctx: FrontContext, session: Session): StreamableChannel {
  const channel = new StreamableChannel(ctx.maxStreamBufferBytes, ctx.sessions.deadlines);
  session.attach(channel);
  return channel;
}

export function sessionNotFound(id: RequestId | null): Response {
  return rpcError(
    404,
    RpcErrorCode.sessionNotFound,
    "Session not found: it ended or never existed; send initialize to start a new one",
    id,
  );
}
