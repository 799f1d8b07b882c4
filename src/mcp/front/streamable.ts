/**
 * The Streamable HTTP front (MCP 2025-11-25 transport) at `/{server}/mcp`: POST carries client
 * messages and answers requests with SSE or JSON, GET opens the standalone stream or resumes
 * one by `Last-Event-ID`, DELETE ends the session.
 */
import { idInFlightMessage, RpcErrorCode, type RpcRequest } from "../protocol/jsonrpc.ts";
import type { Session } from "../sessions/session.ts";
import type { JSONRPCMessage } from "../../sdk.ts";
import { type FrontContext, holdStream, initializeAnswer, openSessionOrAnswer } from "./context.ts";
import {
  accepts,
  BodyTooLargeError,
  httpError,
  jsonResponse,
  readBodyLimited,
  rpcError,
} from "./http_util.ts";
import { classifyClientMessage, initializeParamsProblem, parseJsonBody } from "./parse.ts";
import { classifyRequest } from "./revision.ts";
import {
  handleStatelessNotification,
  handleStatelessRequest,
  refusalResponse,
} from "./stateless_lane.ts";
import { expectsPrimingEvent } from "../protocol/protocol_versions.ts";
import { SSE_HEADERS, SseWriter } from "./sse.ts";
import type { StreamableChannel } from "./streamable_channel.ts";
import {
  attachStreamableChannel,
  SESSION_HEADER,
  sessionFor,
  sessionIdOf,
  sessionNotFound,
  statelessMethodRefusal,
} from "./session_lane.ts";

export async function handleStreamablePost(request: Request, ctx: FrontContext): Promise<Response> {
  const contentType = request.headers.get("content-type") ?? "";
  if (!contentType.toLowerCase().startsWith("application/json")) {
    return rpcError(
      415,
      RpcErrorCode.invalidRequest,
      "Unsupported Media Type: send the JSON-RPC message with Content-Type: application/json",
    );
  }
  const accept = request.headers.get("accept");
  if (accept && !accepts(accept, "application/json") && !accepts(accept, "text/event-stream")) {
    return rpcError(
      406,
      RpcErrorCode.invalidRequest,
      "Not Acceptable: the Accept header must allow application/json and text/event-stream",
    );
  }
  let text: string;
  try {
    text = await readBodyLimited(request, ctx.maxMessageBytes);
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      return httpError(
        413,
        "payload_too_large",
        `${error.message} (limits.maxMessageBytes); send a smaller message`,
      );
    }
    return rpcError(400, RpcErrorCode.parseError, "Parse error: the body is not valid UTF-8");
  }
  const body = parseJsonBody(text);
  if (body instanceof Response) return body;
  const lane = classifyRequest({ method: "POST", headers: request.headers, body });
  if (lane.lane === "refused") return refusalResponse(lane);
  if (lane.lane === "stateless") {
    return lane.kind === "request"
      ? await handleStatelessRequest(lane, ctx, request.headers)
      : handleStatelessNotification(lane);
  }
  const parsed = classifyClientMessage(body);
  if (parsed instanceof Response) return parsed;

  if (parsed.kind === "request" && parsed.message.method === "initialize") {
    return await initialize(parsed.message, request, ctx);
  }
  const session = await sessionFor(
    request,
    ctx,
    parsed.kind === "request" ? parsed.message.id : null,
    lane.protocolVersionHeader,
  );
  if (session instanceof Response) return session;

  if (parsed.kind !== "request") {
    await session.fromClient(parsed.message as JSONRPCMessage, ctx.clientAddress);
    return new Response(null, { status: 202 });
  }
  const answered = await answer(session, parsed.message, request, ctx);
  // The backend no longer knows the session (ended through another replica, say): 404, so the
  // client starts a new one as the spec has it.
  if (!session.backendSessionGone) return answered;
  await answered.body?.cancel();
  return sessionNotFound(parsed.message.id);
}

async function initialize(message: RpcRequest, request: Request, ctx: FrontContext) {
  const problem = initializeParamsProblem(message.params);
  if (problem) return rpcError(400, RpcErrorCode.invalidParams, problem, message.id);
  const session = await openSessionOrAnswer(
    ctx,
    message.id,
    (message.params as { capabilities?: unknown } | undefined)?.capabilities,
  );
  if (session instanceof Response) return session;

  attachStreamableChannel(ctx, session);
  return await initializeAnswer(ctx, session, message.id, answer(session, message, request, ctx));
}

function answer(
  session: Session,
  message: RpcRequest,
  request: Request,
  ctx: FrontContext,
): Response | Promise<Response> {
  const channel = session.channel as StreamableChannel;
  const headers = { [SESSION_HEADER]: session.id };
  // Answers are routed by request id: a second request under the id of one still in flight
  // would take over the first one's route and leave it unanswered, so it is refused here,
  // before it gets a route (the session's own check comes too late for that).
  if (session.isInFlight(message.id)) {
    return rpcError(400, RpcErrorCode.invalidRequest, idInFlightMessage(message.id), message.id);
  }
  if (!accepts(request.headers.get("accept") ?? "*/*", "text/event-stream")) {
    const response = channel.awaitResponse(message.id);
    void session.fromClient(message as JSONRPCMessage, ctx.clientAddress);
    return response.then((body) => jsonResponse(body, 200, headers));
  }
  // The answer to initialize waits for the backend's: a session id goes out only with a backend
  // that has accepted (the request's timeout bounds the wait).
  const window = message.method === "initialize" ? Infinity : undefined;
  const first = channel.answerFirst(
    message.id,
    expectsPrimingEvent(session.protocolVersion),
    window,
  );
  void session.fromClient(message as JSONRPCMessage, ctx.clientAddress);
  return first.then((answer) => {
    if ("json" in answer) return jsonResponse(answer.json, 200, headers);
    void holdStream(ctx, session, answer.stream);
    return new Response(answer.stream.body, { headers: { ...SSE_HEADERS, ...headers } });
  });
}

export async function handleStreamableGet(request: Request, ctx: FrontContext): Promise<Response> {
  const stateless = statelessMethodRefusal(request);
  if (stateless) return stateless;
  if (!accepts(request.headers.get("accept"), "text/event-stream")) {
    return rpcError(
      406,
      RpcErrorCode.invalidRequest,
      "Not Acceptable: a GET opens an SSE stream; send Accept: text/event-stream",
    );
  }
  const session = await sessionFor(request, ctx);
  if (session instanceof Response) return session;

  const channel = session.channel as StreamableChannel;
  const writer = new SseWriter(ctx.maxStreamBufferBytes, ctx.sessions.clock);
  const lastEventId = request.headers.get("last-event-id");
  if (lastEventId !== null) {
    if (!channel.resume(lastEventId, writer)) {
      writer.close();
      return rpcError(
        400,
        RpcErrorCode.invalidRequest,
        "Bad Request: Last-Event-ID names no stream of this session; open a new stream without it",
      );
    }
  } else if (!channel.openStandalone(writer, expectsPrimingEvent(session.protocolVersion))) {
    writer.close();
    return rpcError(
      409,
      RpcErrorCode.invalidRequest,
      "Conflict: this session already has an open GET stream",
    );
  }
  void holdStream(ctx, session, writer).then(() => session.activity.touch());
  return new Response(writer.body, {
    headers: { ...SSE_HEADERS, [SESSION_HEADER]: session.id },
  });
}

export async function handleStreamableDelete(
  request: Request,
  ctx: FrontContext,
): Promise<Response> {
  const stateless = statelessMethodRefusal(request);
  if (stateless) return stateless;
  const id = sessionIdOf(request);
  if (id instanceof Response) return id;
  // Answered once the session can no longer be found or continued on any replica.
  const ended = id !== undefined &&
    await ctx.sessions.end(id, ctx.server, ctx.principal, "the client ended the session");
  return ended ? new Response(null, { status: 204 }) : sessionNotFound(null);
}
