/**
 * A 2026 backend's `input_required`, relayed to a 2025 client: each embedded input request
 * becomes a real server-to-client request on the client's session, and the client's answers
 * become the params of the gateway's retry of the original request (the answers under their
 * keys in `inputResponses`, the backend's `requestState` echoed byte for byte).
 */
import {
  idKey,
  type RequestId,
  type RpcNotification,
  type RpcRequest,
  type RpcResponse,
} from "../protocol/jsonrpc.ts";
import { randomBase64Url } from "../../crypto/random.ts";
import { isObject, type Json, metaOf, withMeta, without } from "./json_shape.ts";
import { INPUT_KEY_META } from "./input_requests.ts";
import { isInputMethod } from "../protocol/protocol_versions.ts";

/** A request sent to the 2025 client for the input asked under `key`. */
export interface SentInput {
  key: string;
  request: RpcRequest;
  /** URL mode: the id the gateway minted (2025 requires one, 2026 has none). */
  elicitationId?: string;
}

export interface ClientRequests {
  sent: SentInput[];
  /** Keys whose method a 2025 client cannot be asked (an extension's): the call fails. */
  unrelayable: string[];
}

/**
 * The requests to send the 2025 client for an `input_required` result, in key order; `mintId`
 * gives each one an id of the client session's server-to-client id space.
 */
export function clientRequestsFor2025(
  result: Json,
  mintId: () => RequestId,
  mintElicitationId: () => string = () => randomBase64Url(16),
): ClientRequests {
  const inputRequests = isObject(result.inputRequests) ? result.inputRequests : {};
  const sent: SentInput[] = [];
  const unrelayable: string[] = [];
  for (const [key, input] of Object.entries(inputRequests)) {
    if (!isObject(input) || !isInputMethod(input.method)) {
      unrelayable.push(key);
      continue;
    }
    const request: RpcRequest = { jsonrpc: "2.0", id: mintId(), method: input.method };
    const params = isObject(input.params) ? { ...input.params } : undefined;
    const entry: SentInput = { key, request };
    if (params && input.method === "elicitation/create" && params.mode === "url") {
      entry.elicitationId = mintElicitationId();
      params.elicitationId = entry.elicitationId;
    }
    // The key rides along, so a gateway (or this one's stateless lane) in front of the 2025
    // client asks its own 2026 client under the same key.
    request.params = withMeta(params ?? {}, { ...metaOf(params), [INPUT_KEY_META]: key });
    sent.push(entry);
  }
  return { sent, unrelayable };
}

export type RetryOutcome =
  /** Retry the original request with these params, on a new id. */
  | { kind: "retry"; params: Json }
  /** The client refused an input with an error: the original request fails with it. */
  | { kind: "failed"; error: NonNullable<RpcResponse["error"]> }
  /** Not every sent request has its answer yet. */
  | { kind: "waiting"; keys: string[] };

/**
 * The retry's params: the original ones (without an earlier round's retry params), the
 * client's answers in `inputResponses`, and the result's `requestState` when it had one.
 */
export function retryParams(
  originalParams: Json,
  result: Json,
  sent: readonly SentInput[],
  answers: readonly RpcResponse[],
): RetryOutcome {
  const byId = new Map(answers.map((answer) => [idKey(answer.id), answer]));
  const waiting = sent.filter((entry) => !byId.has(idKey(entry.request.id)));
  if (waiting.length > 0) return { kind: "waiting", keys: waiting.map((entry) => entry.key) };
  const inputResponses: Json = {};
  for (const entry of sent) {
    const answer = byId.get(idKey(entry.request.id))!;
    if (answer.error) return { kind: "failed", error: answer.error };
    inputResponses[entry.key] = answer.result ?? {};
  }
  const params: Json = { ...without(originalParams, ["inputResponses", "requestState"]) };
  if (sent.length > 0) params.inputResponses = inputResponses;
  if (typeof result.requestState === "string") params.requestState = result.requestState;
  return { kind: "retry", params };
}

/**
 * `notifications/elicitation/complete` for each URL elicitation the client accepted, to send
 * once the retry has been answered: a 2025 client may wait for it, and a 2026 backend sends
 * none (its retry's answer is the completion).
 */
export function elicitationCompletions(
  sent: readonly SentInput[],
  answers: readonly RpcResponse[],
): RpcNotification[] {
  const accepted = new Set(
    answers.filter((answer) => answer.result?.action === "accept").map((a) => idKey(a.id)),
  );
  return sent
    .filter((entry) => entry.elicitationId !== undefined && accepted.has(idKey(entry.request.id)))
    .map((entry) => ({
      jsonrpc: "2.0",
      method: "notifications/elicitation/complete",
      params: { elicitationId: entry.elicitationId },
    }));
}
