/**
 * A 2026 client's call that may need its input (tools/call, prompts/get, resources/read),
 * served by a 2025 backend: what the backend asks of the client during the call (elicitation,
 * sampling, roots) comes back as an `input_required` result with a sealed `requestState`; the
 * client's retry brings `inputResponses`, which answer the waiting backend requests, and the
 * call goes on from where it stood. Any number of rounds; each state is good for one retry.
 */
import { CredentialRequiredError } from "../../core/credential_required.ts";
import {
  errorBody,
  RpcErrorCode,
  type RpcNotification,
  type RpcRequest,
  type RpcResponse,
} from "../protocol/jsonrpc.ts";
import type { HeldInput, LinkCall, StatelessLink } from "../stateless/stateless_links.ts";
import type { HeaderReader } from "./envelope.ts";
import { paramRefusal } from "./param_headers.ts";
import { answersForBackend } from "../translate/input_answers.ts";
import {
  capabilityRefusal,
  refusalForBackend,
  splitByCapabilities,
} from "../translate/input_capabilities.ts";
import { collectInputRequests, inputRequiredResult } from "../translate/input_requests.ts";
import type { Json } from "../translate/json_shape.ts";
import {
  openRequestState,
  RequestStateError,
  requestStateRefusal,
  sealRequestState,
} from "../translate/request_state.ts";
import { messageFor2025Backend } from "../translate/request_meta.ts";
import { responseFor2026 } from "../translate/results.ts";
import type { FrontContext } from "./context.ts";
import type { StatelessEnvelope } from "./revision.ts";
import { ModernErrorCode } from "../protocol/protocol_versions.ts";
import { unaskableError } from "../protocol/gateway_elicitation.ts";
import { SSE_HEADERS, SseWriter } from "./sse.ts";

/** The answer to send the client, with its HTTP status. */
export interface CallAnswer {
  body: RpcResponse;
  status: number;
}

/**
 * The answer to `message` on its own SSE stream: `run` sends the call's progress and logs as
 * they come and resolves with the response, which ends the stream. A call that fails is logged
 * and answered with an error, so the stream always ends with an answer.
 */
export function answerOnStream(
  message: RpcRequest,
  ctx: FrontContext,
  run: (send: (notification: RpcNotification) => void) => Promise<unknown>,
): Response {
  const writer = new SseWriter(ctx.maxStreamBufferBytes, ctx.sessions.clock);
  const send = (body: unknown) => writer.write({ event: "message", data: JSON.stringify(body) });
  void run(send)
    .then(send)
    .catch((error) => {
      ctx.logger.warn("stateless call failed", { server: ctx.server.name, error });
      send(errorBody(message.id, RpcErrorCode.backendError, "the gateway failed this call"));
    })
    .finally(() => writer.close());
  return new Response(writer.body, { headers: SSE_HEADERS });
}

/** Runs a new call on `link` (whose input slot it holds). */
export async function startTakingInput(
  message: RpcRequest,
  envelope: StatelessEnvelope,
  link: StatelessLink,
  ctx: FrontContext,
  onProgress?: (notification: RpcNotification) => void,
): Promise<CallAnswer> {
  const call = await link.start(
    messageFor2025Backend(message),
    onProgress,
    onProgress && envelope.logLevel,
    undefined,
    ctx.clientAddress,
  );
  return await drive(call, message, envelope, link, ctx);
}

/**
 * The reference a retry's `requestState` was sealed with, or the client's answer when the
 * state is not one this gateway issued for this person, server and request.
 */
export async function openRetryState(
  message: RpcRequest,
  ctx: FrontContext,
): Promise<string | CallAnswer> {
  const binding = stateBinding(message, ctx);
  try {
    const opened = await openRequestState(
      ctx.links.stateKeys,
      ctx.sessions.clock,
      binding.params.requestState,
      binding,
    );
    return opened.pending;
  } catch (error) {
    if (!(error instanceof RequestStateError)) throw error;
    return { body: requestStateRefusal(message.id, error), status: 200 };
  }
}

/** Continues the waiting call that `ref` (from `openRetryState`) names, with its answers. */
export async function continueWithInput(
  message: RpcRequest,
  envelope: StatelessEnvelope,
  ctx: FrontContext,
  ref: string,
  headers: HeaderReader,
): Promise<CallAnswer> {
  const params = (message.params ?? {}) as Json;
  const waiting = ctx.links.waiting.take(ref);
  if (!waiting) {
    return inBand(
      message,
      "the request this requestState continues is no longer waiting (it timed out, or the " +
        "retry reached another gateway replica): send the original request again without " +
        "requestState and inputResponses",
    );
  }
  const mismatch = await paramRefusal(waiting.link, message, headers);
  if (mismatch) {
    // Refused before the backend heard anything: the same state may be retried.
    ctx.links.waiting.hold(waiting, ref);
    const { code, message: text, data, status } = mismatch;
    return {
      body: { jsonrpc: "2.0", id: message.id, error: { code, message: text, data } },
      status,
    };
  }
  const outcome = answersForBackend(waiting.asked, params.inputResponses);
  if (outcome.kind === "malformed") {
    // Nothing reached the backend: the same state may be retried with well-formed answers.
    ctx.links.waiting.hold(waiting, ref);
    return { body: { jsonrpc: "2.0", id: message.id, error: outcome.error }, status: 200 };
  }
  await waiting.call.answer(outcome.responses);
  if (outcome.kind === "incomplete") {
    const state = await hold({ ...waiting, asked: outcome.missing }, message, ctx);
    return answer(message, inputRequiredResult(outcome.inputRequests, state));
  }
  return await drive(waiting.call, message, envelope, waiting.link, ctx);
}

/**
 * Waits for the call's next step: its answer goes to the client; requests for input are asked
 * of the client when this request declared what they need, refused to the backend otherwise.
 */
async function drive(
  call: LinkCall,
  message: RpcRequest,
  envelope: StatelessEnvelope,
  link: StatelessLink,
  ctx: FrontContext,
): Promise<CallAnswer> {
  for (;;) {
    const step = await call.next();
    if (step.kind === "response") {
      const serverInfo = link.initializeResult.serverInfo as Json | undefined;
      const response = responseFor2026(
        message.method,
        { ...step.response, id: message.id },
        serverInfo,
      );
      return { body: response, status: 200 };
    }
    const collected = collectInputRequests(step.requests);
    const split = splitByCapabilities(collected.asked, envelope.clientCapabilities as Json);
    await call.answer(split.refused.map(refusalForBackend));
    if (split.allowed.length > 0) {
      const state = await hold({ link, call, asked: split.allowed }, message, ctx);
      const asked = Object.fromEntries(split.allowed.map((entry) => [entry.key, entry.request]));
      return answer(message, inputRequiredResult(asked, state));
    }
    if (split.requiredCapabilities) {
      // The gateway's own page (an approval) is named to a client that cannot be sent to it.
      const unaskable = split.refused.map((entry) => unaskableError(entry.request));
      if (unaskable.every((error) => error !== undefined)) {
        await call.cancel("the client cannot open the page it was to be sent to");
        return { body: { jsonrpc: "2.0", id: message.id, error: unaskable[0]! }, status: 200 };
      }
      // Nothing the client could be asked: it must declare more and send the request again.
      await call.cancel("the client lacks a capability the backend needs");
      return { body: capabilityRefusal(message.id, split.requiredCapabilities), status: 400 };
    }
  }
}

async function hold(waiting: HeldInput, message: RpcRequest, ctx: FrontContext) {
  return await sealState(message, ctx, ctx.links.waiting.hold(waiting), ctx.links.waiting.ttlMs);
}

/** A `requestState` for `message`'s retry, bound to this person and server, naming `ref`. */
export async function sealState(
  message: RpcRequest,
  ctx: FrontContext,
  ref: string,
  ttlMs: number,
): Promise<string> {
  return await sealRequestState(
    ctx.links.stateKeys[0],
    ctx.sessions.clock,
    stateBinding(message, ctx),
    ref,
    ttlMs,
  );
}

/** What a state is bound to: whose, which server, which request. */
function stateBinding(message: RpcRequest, ctx: FrontContext) {
  return {
    person: ctx.principal.id,
    server: ctx.server.name,
    method: message.method,
    params: (message.params ?? {}) as Json,
  };
}

function answer(message: RpcRequest, result: Json): CallAnswer {
  return { body: { jsonrpc: "2.0", id: message.id, result }, status: 200 };
}

function inBand(message: RpcRequest, text: string): CallAnswer {
  return {
    body: {
      jsonrpc: "2.0",
      id: message.id,
      error: { code: ModernErrorCode.invalidParams, message: text },
    },
    status: 200,
  };
}

/**
 * A person who has not connected their account at a service that acts as them: for a client
 * that can open URLs, an `input_required` URL elicitation of the page where they connect it;
 * the retry (no state: it is a new call) finds the credential in place.
 */
export function credentialInput(
  error: CredentialRequiredError,
  message: RpcRequest,
  envelope: StatelessEnvelope,
): CallAnswer | undefined {
  const elicitation = envelope.clientCapabilities.elicitation as Json | undefined;
  if (typeof elicitation?.url !== "object") return undefined;
  return answer(
    message,
    inputRequiredResult({
      connect: {
        method: "elicitation/create",
        params: { mode: "url", url: error.pageUrl, message: error.message },
      },
    }),
  );
}
