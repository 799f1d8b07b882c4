/**
 * `subscriptions/listen` for 2026-07-28 clients of a 2025 backend: a POST whose SSE answer
 * stays open, first acknowledging what will be sent (what the client asked and the backend
 * declares), then each list change and resource update the person's links hear, tagged with
 * the listen's id. Resource updates need a `resources/subscribe` on the backend, held while
 * any listen of the person's wants that URI. The listen keeps its link from idling out; it
 * ends when the client closes it, with its answer when the link ends, and with an error when
 * the grant of its own request is revoked.
 *
 * What one listen may cost is bounded: at most `limits.listenUris` URIs in it, at most
 * `limits.listenUrisPerUser` across the person's open listens, and its subscribe calls a few
 * at a time rather than one long chain.
 */
import {
  errorBody,
  type RequestId,
  RpcErrorCode,
  type RpcErrorResponse,
  type RpcRequest,
  type RpcResponse,
} from "../protocol/jsonrpc.ts";
import type { StatelessLink } from "../stateless/stateless_links.ts";
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

/** How many `resources/subscribe` (or unsubscribe) calls of one listen are in flight at once. */
const SUBSCRIBE_CALLS_AT_ONCE = 8;

export async function handleListen(
  message: RpcRequest,
  link: StatelessLink,
  ctx: FrontContext,
): Promise<Response> {
  const filter = parseListenFilter(message.params);
  if (typeof filter === "string") {
    return jsonResponse(errorBody(message.id, RpcErrorCode.invalidParams, filter), 200);
  }
  const asked = filter.resourceSubscriptions?.length ?? 0;
  if (asked > ctx.listenUris) {
    return jsonResponse(
      errorBody(
        message.id,
        RpcErrorCode.invalidParams,
        `this listen names ${asked} resource URIs in resourceSubscriptions; at most ` +
          `${ctx.listenUris} are taken (limits.listenUris): listen for fewer, or have the ` +
          "gateway's operator raise limits.listenUris",
        { limit: "limits.listenUris", max: ctx.listenUris, asked },
      ),
      200,
    );
  }
  const capabilities = (link.initializeResult.capabilities ?? {}) as Json;
  const honoured = honouredFilter(filter, capabilities);
  const uris = honoured.resourceSubscriptions ?? [];
  const watched = ctx.links.listens.watch(ctx.principal, uris.length, ctx.listenUrisPerUser);
  if (watched !== undefined) {
    return jsonResponse(
      errorBody(
        message.id,
        RpcErrorCode.backendError,
        `your open listens already watch ${watched} resource URIs and this one names ` +
          `${uris.length}; at most ${ctx.listenUrisPerUser} are watched at once per person ` +
          "(limits.listenUrisPerUser): end a listen first, or have the gateway's operator raise " +
          "limits.listenUrisPerUser",
        { limit: "limits.listenUrisPerUser", max: ctx.listenUrisPerUser, watched },
      ),
      200,
    );
  }
  const writer = new SseWriter(ctx.maxStreamBufferBytes, ctx.sessions.clock);
  const send = (value: unknown) => writer.write({ event: "message", data: JSON.stringify(value) });
  /** The listen's answer, and the end of its stream; the first reason to end wins. */
  const end = (answer: RpcResponse | RpcErrorResponse) => {
    if (!writer.open) return;
    send(answer);
    writer.close();
  };
  send(acknowledgement(message.id, honoured));
  const stopListening = ctx.links.listen(ctx.server, ctx.principal, (notification) => {
    const tagged = notificationForListen(notification, message.id, honoured);
    if (tagged && writer.open) send(tagged);
  });
  const forgetGrant = ctx.links.listens.untilRevoked(ctx.principal, (reason) => {
    ctx.logger.info("listen ended: its grant was revoked", {
      server: ctx.server.name,
      user: ctx.principal.id,
    });
    end(errorBody(message.id, RpcErrorCode.backendError, reason));
  });
  link.hold(writer.closed);
  link.onClosed(() => end(listenEndResponse(message.id)));
  const subscribed: string[] = [];
  const subscribing = eachFewAtATime(uris, () => writer.open, async (uri) => {
    subscribed.push(uri);
    await subscribe(link, uri, message.id, ctx);
  });
  void writer.closed.then(async () => {
    stopListening();
    forgetGrant();
    await subscribing;
    await eachFewAtATime(subscribed, () => true, (uri) => unsubscribe(link, uri, message.id, ctx));
    ctx.links.listens.unwatch(ctx.principal, uris.length);
  });
  await subscribing;
  return new Response(writer.body, { headers: SSE_HEADERS });
}

/**
 * Runs `work` for each item, at most SUBSCRIBE_CALLS_AT_ONCE at a time, starting no more once
 * `goOn` says false (the listen ended while it subscribed).
 */
async function eachFewAtATime<T>(
  items: readonly T[],
  goOn: () => boolean,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length && goOn()) await work(items[next++]);
  };
  const workers = Math.min(SUBSCRIBE_CALLS_AT_ONCE, items.length);
  await Promise.all(Array.from({ length: workers }, worker));
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
  // A link that ended meanwhile may throw: the listen ends with it, and its count is given back.
  const answer = await link.call({ jsonrpc: "2.0", id: `${listen}`, method, params: { uri } })
    .catch((error: Error) => ({ error: { message: error.message } }));
  if (answer.error) {
    ctx.logger.warn("backend refused a resource subscription", {
      server: ctx.server.name,
      method,
      error: answer.error.message,
    });
  }
}
