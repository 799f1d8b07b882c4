/**
 * What a front transport needs to serve one request for one configured server, and the steps
 * every front shares: opening a session or saying why not, counting its streams, and the
 * answer to `initialize`.
 */
import type { ServerConfig } from "../../config/types.ts";
import type { Principal } from "../../core/principal.ts";
import type { Logger } from "../../observability/logger.ts";
import { type RequestId, RpcErrorCode } from "../protocol/jsonrpc.ts";
import type { Session } from "../sessions/session.ts";
import { SessionLimitError, type SessionRegistry } from "../sessions/sessions.ts";
import type { StatelessLinks } from "../stateless/stateless_links.ts";
import { CredentialRequiredError } from "../../core/credential_required.ts";
import { credentialRpcError, supportsUrlElicitation } from "../protocol/credential_errors.ts";
import { errorResponse } from "../protocol/jsonrpc.ts";
import { httpError, jsonResponse, rpcError } from "./http_util.ts";
import type { SseEndReason, SseWriter } from "./sse.ts";

export interface FrontContext {
  server: ServerConfig;
  principal: Principal;
  /** The client's address (behind trustedProxies, the real client's), when known. */
  clientAddress?: string;
  sessions: SessionRegistry;
  /** The per-person backend links of clients without sessions (MCP 2026-07-28). */
  links: StatelessLinks;
  maxMessageBytes: number;
  /** Bytes an SSE stream may hold for a client that reads slowly before it is cut. */
  maxStreamBufferBytes: number;
  /** Resource URIs one `subscriptions/listen` may name (limits.listenUris). */
  listenUris: number;
  /** Resource URIs one person's open listens may watch here (limits.listenUrisPerUser). */
  listenUrisPerUser: number;
  /** Told when a stream of `session` was cut because its client read too slowly. */
  onSlowReader(session: Session): void;
  /** Path prefix of the public base URL ("" or "/gateway"), for URLs the gateway hands out. */
  basePath: string;
  logger: Logger;
}

/**
 * Counts `writer` as an open stream of `session` (a session holding one is not idle) until it
 * ends, and reports a cut for slow reading; resolves with why the stream ended.
 */
export function holdStream(
  ctx: FrontContext,
  session: Session,
  writer: SseWriter,
): Promise<SseEndReason> {
  return session.activity.holdStream(writer.closed).then((reason) => {
    if (reason === "overflow") ctx.onSlowReader(session);
    return reason;
  });
}

/**
 * Opens a session for this caller, or answers for the client: 429 over a session limit, 502
 * when the backend cannot start (a JSON-RPC error carrying `requestId` when there is one).
 */
export async function openSessionOrAnswer(
  ctx: FrontContext,
  requestId?: RequestId,
  clientCapabilities?: unknown,
): Promise<Session | Response> {
  try {
    return await ctx.sessions.open(ctx.server, ctx.principal);
  } catch (error) {
    if (error instanceof SessionLimitError) return tooManySessions(error);
    if (error instanceof CredentialRequiredError) {
      // The request was fine; the person has something to do first. A JSON-RPC answer
      // reaches the person through their client; without a request, an HTTP refusal.
      if (requestId === undefined) return httpError(403, "credential_required", error.message);
      const body = credentialRpcError(error, supportsUrlElicitation(clientCapabilities));
      return jsonResponse(errorResponse(requestId, body.code, body.message, body.data), 200);
    }
    return backendFailedToStart(ctx, error, requestId);
  }
}

/** 429: the person (or everyone) is at the session limit, and no session could make room. */
export function tooManySessions(error: SessionLimitError): Response {
  return httpError(429, "too_many_sessions", error.message, { "retry-after": "60" });
}

/** The backend would not start for this request: logged, and the 502 to answer. */
export function backendFailedToStart(
  ctx: FrontContext,
  error: unknown,
  requestId?: RequestId,
): Response {
  ctx.logger.warn("backend failed to start", { server: ctx.server.name, error });
  return couldNotStart(ctx, (error as Error).message, requestId);
}

/** 502: the backend could not start, and why (a JSON-RPC error carrying `requestId` if any). */
function couldNotStart(ctx: FrontContext, why: string, requestId?: RequestId): Response {
  const message = `The backend "${ctx.server.name}" could not start: ${why}`;
  return requestId === undefined
    ? httpError(502, "backend_unavailable", message)
    : rpcError(502, RpcErrorCode.backendError, message, requestId);
}

/**
 * The answer to `initialize` as the session left it. A session whose backend the gateway could
 * not get through initialize (unreachable, exited, silent) is not handed out: 502 with a
 * JSON-RPC error naming the failure, as when a stdio backend cannot start at all, and no
 * session id. A session that ended otherwise (the backend refused, its error passed on as it
 * wrote it) gets its answer without a session id either.
 */
export async function initializeAnswer(
  ctx: FrontContext,
  session: Session,
  requestId: RequestId,
  answer: Response | Promise<Response>,
): Promise<Response> {
  const response = await answer;
  const failure = session.initializeFailure;
  if (failure !== undefined) {
    void session.close(failure);
    await response.body?.cancel();
    ctx.logger.warn("backend failed to start", { server: ctx.server.name, error: failure });
    return couldNotStart(ctx, failure, requestId);
  }
  if (!session.closed) return response;
  const headers = new Headers(response.headers);
  headers.delete("mcp-session-id");
  return new Response(response.body, { status: response.status, headers });
}
