/**
 * The legacy HTTP+SSE front (MCP 2024-11-05) at `/{server}/sse`: the GET stream's first event
 * names the gateway's own message URL, every later event carries one JSON-RPC message, and
 * the client POSTs its messages to `/{server}/message?sessionId=…`. The session lives exactly
 * as long as the stream.
 */
import type { JSONRPCMessage } from "../../sdk.ts";
import { RpcErrorCode } from "../protocol/jsonrpc.ts";
import type { ClientChannel } from "../sessions/session.ts";
import { parseSessionId } from "../../core/ids.ts";
import { type FrontContext, holdStream, openSessionOrAnswer } from "./context.ts";
import { BodyTooLargeError, httpError, readBodyLimited, rpcError } from "./http_util.ts";
import { initializeParamsProblem, parseClientMessage } from "./parse.ts";
import { SSE_HEADERS, SseWriter } from "./sse.ts";

class LegacyChannel implements ClientChannel {
  constructor(private readonly writer: SseWriter) {}

  deliver(message: JSONRPCMessage): void {
    this.writer.write({ event: "message", data: JSON.stringify(message) });
  }

  ended(): void {
    this.writer.close();
  }
}

export async function handleLegacyStream(ctx: FrontContext): Promise<Response> {
  const session = await openSessionOrAnswer(ctx);
  if (session instanceof Response) return session;
  const writer = new SseWriter(ctx.maxStreamBufferBytes, ctx.sessions.clock);
  session.attach(new LegacyChannel(writer));
  const ended = holdStream(ctx, session, writer);
  writer.write({
    event: "endpoint",
    data: `${ctx.basePath}/${ctx.server.name}/message?sessionId=${session.id}`,
  });
  ended.then((reason) => {
    // The legacy transport cannot resume: its session ends with its stream.
    void session.close(
      reason === "overflow"
        ? "the client read its SSE stream too slowly (limits.maxStreamBuffer)"
        : "the client closed the SSE stream",
    );
  });
  return new Response(writer.body, { headers: SSE_HEADERS });
}

export async function handleLegacyMessage(request: Request, ctx: FrontContext): Promise<Response> {
  const rawId = new URL(request.url).searchParams.get("sessionId");
  if (!rawId) {
    return httpError(400, "invalid_request", "the sessionId query parameter is required");
  }
  const id = parseSessionId(rawId);
  // The session lives with its stream on this process: never continued from another replica.
  const session = id && ctx.sessions.findHere(id, ctx.server, ctx.principal);
  if (!session || !(session.channel instanceof LegacyChannel)) {
    return httpError(
      404,
      "session_not_found",
      "no open SSE session with this sessionId; open GET /sse again",
    );
  }
  const contentType = request.headers.get("content-type") ?? "";
  if (!contentType.toLowerCase().startsWith("application/json")) {
    return httpError(415, "unsupported_media_type", "send the message as application/json");
  }
  let text: string;
  try {
    text = await readBodyLimited(request, ctx.maxMessageBytes);
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      return httpError(413, "payload_too_large", `${error.message} (limits.maxMessageBytes)`);
    }
    return rpcError(400, RpcErrorCode.parseError, "Parse error: the body is not valid UTF-8");
  }
  const parsed = parseClientMessage(text);
  if (parsed instanceof Response) return parsed;
  if (parsed.kind === "request" && parsed.message.method === "initialize") {
    const problem = initializeParamsProblem(parsed.message.params);
    if (problem) {
      // The stream's backend has not been initialized and never will be: end the session.
      void session.close(problem);
      return rpcError(400, RpcErrorCode.invalidParams, problem, parsed.message.id);
    }
  }
  void session.fromClient(parsed.message as JSONRPCMessage, ctx.clientAddress);
  return new Response("Accepted", { status: 202 });
}
