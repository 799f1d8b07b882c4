/**
 * A 2025 backend's requests to the client, as the `input_required` result a 2026 client gets
 * instead: each `elicitation/create`, `sampling/createMessage` or `roots/list` the backend sent
 * during one client request becomes an entry of `inputRequests` under a key, and the gateway
 * remembers which backend request each key answers.
 *
 * Keys are deterministic, never the backend's JSON-RPC id (which depends on the link): a key
 * the backend names in `params._meta["gatehouse/inputKey"]` (when it is a short token and not
 * taken), else the kind and a count in arrival order: `elicitation-1`, `sampling-1`, `roots-1`.
 */
import type { RequestId, RpcRequest } from "../protocol/jsonrpc.ts";
import { isObject, type Json, metaOf, withMeta, without } from "./json_shape.ts";
import { type InputMethod, isInputMethod } from "../protocol/protocol_versions.ts";

/** The `_meta` key with which a 2025 backend may choose the key of its request. */
export const INPUT_KEY_META = "gatehouse/inputKey";

const KEY_SHAPE = /^[A-Za-z0-9_.-]{1,64}$/;

const KIND: Record<InputMethod, string> = {
  "elicitation/create": "elicitation",
  "sampling/createMessage": "sampling",
  "roots/list": "roots",
};

/** One embedded request of an `input_required` result: `{ method, params }`, no id. */
export interface InputRequest {
  method: InputMethod;
  params?: Json;
}

/** A backend request the 2026 client was asked to answer under `key`. */
export interface AskedInput {
  key: string;
  /** The id the backend waits under for the answer. */
  backendId: RequestId;
  /** As the 2026 client got it. */
  request: InputRequest;
  /** URL mode: the id the backend gave, which 2026 has not (its completion is dropped). */
  elicitationId?: string;
}

export interface CollectedInput {
  inputRequests: Record<string, InputRequest>;
  asked: AskedInput[];
  /** Requests that are not input (`ping`, unknown methods): the gateway answers them itself. */
  others: RpcRequest[];
}

/** The `inputRequests` of a backend's pending requests, and what each key answers. */
export function collectInputRequests(requests: readonly RpcRequest[]): CollectedInput {
  const input = requests.filter((request) => isInputMethod(request.method));
  const keys = assignKeys(input);
  const asked = input.map((request, index): AskedInput => {
    const method = request.method as InputMethod;
    const { params, elicitationId } = paramsFor2026(method, request.params);
    const entry: AskedInput = { key: keys[index], backendId: request.id, request: { method } };
    if (params) entry.request.params = params;
    if (elicitationId !== undefined) entry.elicitationId = elicitationId;
    return entry;
  });
  return {
    inputRequests: Object.fromEntries(asked.map((entry) => [entry.key, entry.request])),
    asked,
    others: requests.filter((request) => !isInputMethod(request.method)),
  };
}

/** The `input_required` result; `requestState` left out when there is none. */
export function inputRequiredResult(
  inputRequests: Record<string, InputRequest>,
  requestState?: string,
): Json {
  const result: Json = { resultType: "input_required", inputRequests };
  if (requestState !== undefined) result.requestState = requestState;
  return result;
}

/** Steered keys first (so none is taken by a counted one), then counted keys in order. */
function assignKeys(requests: readonly RpcRequest[]): string[] {
  const taken = new Set<string>();
  const keys = requests.map((request) => {
    const steered = metaOf(request.params)?.[INPUT_KEY_META];
    if (typeof steered !== "string" || !KEY_SHAPE.test(steered) || taken.has(steered)) return "";
    taken.add(steered);
    return steered;
  });
  const counts = new Map<string, number>();
  return keys.map((key, index) => {
    if (key) return key;
    const kind = KIND[requests[index].method as InputMethod];
    let candidate: string;
    do {
      const n = (counts.get(kind) ?? 0) + 1;
      counts.set(kind, n);
      candidate = `${kind}-${n}`;
    } while (taken.has(candidate));
    taken.add(candidate);
    return candidate;
  });
}

/**
 * A 2025 request's params as a 2026 input request carries them. Left out: a URL elicitation's
 * `elicitationId` (2026 has none; returned to be remembered), `task` (task-augmented requests
 * do not cross revisions), and from `_meta` the key steering and `progressToken` (a 2026
 * client sends no progress).
 */
function paramsFor2026(
  method: InputMethod,
  params: Json | undefined,
): { params?: Json; elicitationId?: string } {
  if (!params) return {};
  let out = without(params, ["task"]);
  let elicitationId: string | undefined;
  if (method === "elicitation/create" && params.mode === "url") {
    if (typeof params.elicitationId === "string") elicitationId = params.elicitationId;
    out = without(out, ["elicitationId"]);
  }
  const meta = metaOf(params);
  if (meta) out = withMeta(out, without(meta, [INPUT_KEY_META, "progressToken"]));
  return elicitationId === undefined ? { params: out } : { params: out, elicitationId };
}

/**
 * Whether a backend notification is the `notifications/elicitation/complete` of a URL
 * elicitation that was asked of a 2026 client: 2026 has no such notification (the client's
 * retry is the completion), so the gateway drops it.
 */
export function isAskedElicitationComplete(
  notification: { method: string; params?: Json },
  asked: readonly AskedInput[],
): boolean {
  if (notification.method !== "notifications/elicitation/complete") return false;
  const id = isObject(notification.params) ? notification.params.elicitationId : undefined;
  return typeof id === "string" && asked.some((entry) => entry.elicitationId === id);
}
