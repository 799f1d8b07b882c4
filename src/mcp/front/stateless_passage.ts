/**
 * A 2026-07-28 client's request to a backend that speaks 2026-07-28 too: it passes through the
 * person's link as the client sent it (its own `_meta` envelope, after the front's header and
 * envelope checks), and the backend's answer comes back as the backend wrote it. One thing is
 * the gateway's: a `requestState` the backend hands out with `input_required` is sealed for
 * this person, server and request before the client sees it, and opened again on the retry,
 * so a state cannot be forged, carried to another person or server, or kept past its time.
 */
import type { RpcRequest, RpcResponse } from "../protocol/jsonrpc.ts";
import type { StatelessLink } from "../stateless/stateless_links.ts";
import { answerOf, progressTokenOf } from "../stateless/link_calls.ts";
import { isObject, type Json } from "../translate/json_shape.ts";
import { discoverAtGateway } from "../translate/discover.ts";
import { type LogLevel, modernHttpStatus } from "../protocol/protocol_versions.ts";
import type { FrontContext } from "./context.ts";
import { jsonResponse } from "./http_util.ts";
import { answerOnStream, sealState } from "./stateless_calls.ts";

/** What the sealed reference of a passed-through state starts with (the backend's follows). */
const PASSAGE_PREFIX = "passage:";

/**
 * How long a sealed backend state is accepted: nothing waits at the gateway meanwhile (the
 * backend keeps its own state), so this only bounds replay; long enough for a person to fill
 * in a form.
 */
export const PASSAGE_STATE_TTL_MS = 10 * 60_000;

/** The backend's own state inside an opened reference, or undefined for a waiting call's. */
export function passedState(reference: string): string | undefined {
  return reference.startsWith(PASSAGE_PREFIX) ? reference.slice(PASSAGE_PREFIX.length) : undefined;
}

/**
 * Sends `message` on `link` (which `passes`), with `backendState` in place of the client's
 * sealed state on a retry. Progress and logs, when asked for, go on the request's SSE stream.
 */
export async function passThrough(
  message: RpcRequest,
  link: StatelessLink,
  ctx: FrontContext,
  logLevel: LogLevel | undefined,
  backendState?: string,
): Promise<Response> {
  const sent = backendState === undefined
    ? message
    : { ...message, params: { ...message.params, requestState: backendState } };
  if (progressTokenOf(message) === undefined && logLevel === undefined) {
    const answer = await link.call(sent, undefined, ctx.clientAddress);
    const response = await sealed(atGateway(answer, message), message, ctx);
    return jsonResponse(response, statusOf(response));
  }
  return answerOnStream(message, ctx, async (send) => {
    const call = await link.start(sent, send, logLevel, undefined, ctx.clientAddress);
    const step = await call.next();
    const response = await answerOf(call, step);
    return await sealed(atGateway({ ...response, id: message.id }, message), message, ctx);
  });
}

/** The backend's `server/discover` answer with the revisions the gateway's URL serves. */
function atGateway(response: RpcResponse, message: RpcRequest): RpcResponse {
  if (message.method !== "server/discover" || response.result === undefined) return response;
  return { ...response, result: discoverAtGateway(response.result) as RpcResponse["result"] };
}

/** The status the backend's answer would have had over HTTP, whatever its transport. */
function statusOf(response: RpcResponse): number {
  return modernHttpStatus(response.error?.code);
}

/** `response` with the backend's `requestState` (if it gave one) sealed for this request. */
async function sealed(
  response: RpcResponse,
  message: RpcRequest,
  ctx: FrontContext,
): Promise<RpcResponse> {
  const result = response.result as Json | undefined;
  if (!isObject(result) || typeof result.requestState !== "string") return response;
  const reference = PASSAGE_PREFIX + result.requestState;
  const requestState = await sealState(message, ctx, reference, PASSAGE_STATE_TTL_MS);
  return { ...response, result: { ...result, requestState } };
}
