/**
 * Whether a 2026 request may be asked for an input: its `clientCapabilities` are declared per
 * request, while the 2025 backend behind it asked under the capabilities of a session the
 * gateway opened. An input the request did not declare is never shown to its client: the
 * client gets the -32021 refusal naming what was missing, the backend an error for that input.
 */
import {
  errorResponse,
  type RequestId,
  RpcErrorCode,
  type RpcResponse,
} from "../protocol/jsonrpc.ts";
import { isObject, type Json } from "./json_shape.ts";
import type { AskedInput, InputRequest } from "./input_requests.ts";
import { MetaKey, ModernErrorCode } from "../protocol/protocol_versions.ts";

/** The capability an input request needs, in the shape of `ClientCapabilities`. */
export function requiredCapability(request: InputRequest): Json {
  const params = request.params ?? {};
  switch (request.method) {
    case "elicitation/create":
      return { elicitation: params.mode === "url" ? { url: {} } : { form: {} } };
    case "sampling/createMessage":
      return { sampling: "tools" in params || "toolChoice" in params ? { tools: {} } : {} };
    case "roots/list":
      return { roots: {} };
  }
}

/** Whether `capabilities` declare what `request` needs (`elicitation: {}` means form only). */
export function declares(capabilities: Json, request: InputRequest): boolean {
  const { elicitation, sampling, roots } = capabilities;
  switch (request.method) {
    case "elicitation/create": {
      if (!isObject(elicitation)) return false;
      if (request.params?.mode === "url") return isObject(elicitation.url);
      return isObject(elicitation.form) || !("url" in elicitation);
    }
    case "sampling/createMessage": {
      if (!isObject(sampling)) return false;
      const params = request.params ?? {};
      return !("tools" in params || "toolChoice" in params) || isObject(sampling.tools);
    }
    case "roots/list":
      return isObject(roots);
  }
}

export interface CapabilitySplit {
  allowed: AskedInput[];
  refused: AskedInput[];
  /** What the refused inputs need, merged; undefined when none is refused. */
  requiredCapabilities?: Json;
}

/** The asked inputs the request's capabilities cover, and the rest with what they need. */
export function splitByCapabilities(
  asked: readonly AskedInput[],
  clientCapabilities: Json,
): CapabilitySplit {
  const allowed = asked.filter((entry) => declares(clientCapabilities, entry.request));
  const refused = asked.filter((entry) => !declares(clientCapabilities, entry.request));
  if (refused.length === 0) return { allowed, refused };
  const requiredCapabilities = refused
    .map((entry) => requiredCapability(entry.request))
    .reduce(merge, {});
  return { allowed, refused, requiredCapabilities };
}

/** The 2026 client's answer: -32021 with `data.requiredCapabilities` (HTTP 400 on the wire). */
export function capabilityRefusal(id: RequestId, requiredCapabilities: Json): RpcResponse {
  const names = paths(requiredCapabilities).join(", ");
  return errorResponse(
    id,
    ModernErrorCode.missingRequiredClientCapability,
    `This request needs client capabilities it did not declare (${names}): declare them in ` +
      `params._meta["${MetaKey.clientCapabilities}"] and send the request again`,
    { requiredCapabilities },
  ) as RpcResponse;
}

/** The backend's answer to an input the client could not be asked for (as a 2025 client would). */
export function refusalForBackend(entry: AskedInput): RpcResponse {
  const names = paths(requiredCapability(entry.request)).join(", ");
  return errorResponse(
    entry.backendId,
    RpcErrorCode.methodNotFound,
    `The client of this request did not declare ${names}, so it cannot answer ` +
      `${entry.request.method}`,
  ) as RpcResponse;
}

function merge(into: Json, from: Json): Json {
  const out: Json = { ...into };
  for (const [key, value] of Object.entries(from)) {
    out[key] = isObject(out[key]) && isObject(value) ? merge(out[key] as Json, value) : value;
  }
  return out;
}

/** `{ elicitation: { form: {} }, roots: {} }` → `["elicitation.form", "roots"]`. */
function paths(capabilities: Json, prefix = ""): string[] {
  return Object.entries(capabilities).flatMap(([key, value]) =>
    isObject(value) && Object.keys(value).length > 0
      ? paths(value, `${prefix}${key}.`)
      : [`${prefix}${key}`]
  );
}
