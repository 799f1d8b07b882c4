/**
 * `subscriptions/listen` for 2026-07-28 clients of a 2025 backend: a POST whose SSE answer
 * stays open, first acknowledging what will be sent (what the client asked and the backend
 * declares), then each list change and resource update the person's links hear, tagged with
 * the listen's id. Resource updates need a `resources/subscribe` on the backend, held while
 * any listen of the person's wants that URI. The listen keeps its link from idling out; it
 * ends when the client closes it, or with its answer when the link ends.
 */
import { errorBody, type RequestId, RpcErrorCode, type RpcRequest } from "../jsonrpc.ts";
import type { StatelessLink } from "../stateless_links.ts";
import type { Json } from "../translate/json_shape.ts";
import {
  acknowledgement,
  honouredFilter,
  listenEndResponse,
  notificationForListen,
  parseListenFilter,
} from "../translate/subscriptions.ts";
import type { FrontContext } from "./context.ts";
import { jsonResponse } from "./http_util.ts";
import { SSE_HEADERS, SseWriter } from "./sse.ts";

export async function handleListen(
  message: RpcRequest,
  link: StatelessLink,
  ctx: FrontContext,
): Promise<Response> {
  const filter = parseListenFilter(message.params);
  if (typeof filter === "string") {
    return jsonResponse(errorBody(message.id, RpcErrorCode.invalidParams, filter), 200);
  }
  const capabilities = (link.initializeResult.capabilities ?? {}) as Json;
  const honoured = honouredFilter(filter, capabilities);
  const writer = new SseWriter(ctx.maxStreamBufferBytes, ctx.sessions.clock);
  const send = (value: unknown) => writer.write({ event: "message", data: JSON.stringify(value) });
  send(acknowledgement(message.id, honoured));
  const uris = honoured.resourceSubscriptions ?? [];
  for (const uri of uris) await subscribe(link, uri, message.id, ctx);
  const stop = ctx.links.listen(ctx.server, ctx.principal, (notification) => {
    const tagged = notificationForListen(notification, message.id, honoured);
    if (tagged) send(tagged);
  });
  link.hold(writer.closed);
  link.onClosed(() => {
    send(listenEndResponse(message.id));
    writer.close();
  });
  void writer.closed.then(async () => {
    stop();
    for (const uri of uris) await unsubscribe(link, uri, message.id, ctx);
  });
  return new Response(writer.body, { headers: SSE_HEADERS });
}

async function subscribe(link: StatelessLink, uri: string, listen: RequestId, ctx: FrontContext) {
  if (link.subscribed(uri, +1) > 1) return;
  await backendCall(link, "resources/subscribe", uri, listen, ctx);
}

async function unsubscribe(
  link: StatelessLink,
  uri: string,
  listen: RequestId,
  ctx: FrontContext,
) {
  if (link.closed || link.subscribed(uri, -1) > 0) return;
  await backendCall(link, "resources/unsubscribe", uri, listen, ctx);
}

async function backendCall(
  link: StatelessLink,
  method: string,
  uri: string,
  listen: RequestId,
  ctx: FrontContext,
) {
  const answer = await link.call({ jsonrpc: "2.0", id: `${listen}`, method, params: { uri } });
  if (answer.error) {
    ctx.logger.warn("backend refused a resource subscription", {
      server: ctx.server.name,
      method,
      error: answer.error.message,
    });
  }
}
