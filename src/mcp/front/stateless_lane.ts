/**
 * The stateless lane of the Streamable HTTP front (MCP 2026-07-28): a request that carries its
 * own `_meta` and no session. It is served through the person's link to the server
 * (stateless_links.ts), translated for the 2025-11-25 session the link holds, and its answer
 * translated back (mcp/translate/). No `Mcp-Session-Id` is read or handed out.
 *
 * A backend's own requests (elicitation, sampling, roots) during a call that may take input
 * reach its client as `input_required` (stateless_calls.ts); list changes and resource
 * updates reach `subscriptions/listen` streams (stateless_listen.ts). A backend that speaks
 * 2026-07-28 too gets each request as the client sent it (stateless_passage.ts), listens
 * excepted: those are served from the link's one backend listen.
 */
import { CredentialRequiredError } from "../../core/credential_required.ts";
import { ModernErrorCode, takesInput } from "../protocol/protocol_versions.ts";
import { errorBody, RpcErrorCode, type RpcResponse } from "../protocol/jsonrpc.ts";
import { SessionLimitError } from "../sessions/sessions.ts";
import type { StatelessLink } from "../stateless/stateless_links.ts";
import { discoverBeforeCredential, discoverFromInitialize } from "../translate/discover.ts";
import { messageFor2025Backend } from "../translate/request_meta.ts";
import { responseFor2026 } from "../translate/results.ts";
import type { Json } from "../translate/json_shape.ts";
import { backendFailedToStart, type FrontContext, tooManySessions } from "./context.ts";
import { progressTokenOf } from "../stateless/link_calls.ts";
import {
  answerOnStream,
  continueWithInput,
  credentialInput,
  openRetryState,
  startTakingInput,
} from "./stateless_calls.ts";
import { passedState, passThrough } from "./stateless_passage.ts";
import { jsonResponse } from "./http_util.ts";
import { handleListen } from "./stateless_listen.ts";
import type { Refusal, StatelessNotification, StatelessRequest } from "./revision.ts";
import type { HeaderReader } from "./envelope.ts";
import { paramRefusal } from "./param_headers.ts";

export async function handleStatelessRequest(
  choice: StatelessRequest,
  ctx: FrontContext,
  headers: HeaderReader,
): Promise<Response> {
  const { message } = choice;
  const input = takesInput(message.method);
  // A retry's state names a call waiting here, or (a 2026 backend) carries the backend's own.
  let backendState: string | undefined;
  if (
    input && (message.params as Record<string, unknown> | undefined)?.requestState !== undefined
  ) {
    const ref = await openRetryState(message, ctx);
    if (typeof ref !== "string") return answer(ref.body, ref.status);
    backendState = passedState(ref);
    if (backendState === undefined) {
      const served = await continueWithInput(message, choice.envelope, ctx, ref, headers);
      return answer(served.body, served.status);
    }
  }
  let link: StatelessLink;
  try {
    link = await ctx.links.linkFor(ctx.server, ctx.principal, input);
  } catch (error) {
    if (error instanceof CredentialRequiredError && message.method === "server/discover") {
      const result = discoverBeforeCredential(error.message);
      return answer({ jsonrpc: "2.0", id: message.id, result });
    }
    const input = error instanceof CredentialRequiredError && takesInput(message.method)
      ? credentialInput(error, message, choice.envelope)
      : undefined;
    return input ? answer(input.body, input.status) : linkRefusal(error, choice, ctx);
  }
  // Mcp-Param-* against the arguments, by the marks the backend gives the tool.
  const mismatch = await paramRefusal(link, message, headers);
  if (mismatch) return refusalResponse(mismatch);
  if (link.passes && message.method !== "subscriptions/listen") {
    return await passThrough(message, link, ctx, choice.envelope.logLevel, backendState);
  }
  if (backendState !== undefined) {
    // Sealed for a 2026 backend that now speaks 2025 (it was replaced meanwhile).
    return answer(errorBody(
      message.id,
      ModernErrorCode.invalidParams,
      "the backend this requestState was issued for has changed: send the original request " +
        "again without requestState and inputResponses",
    ));
  }
  if (message.method === "server/discover") {
    const result = discoverFromInitialize(link.initializeResult);
    return answer({ jsonrpc: "2.0", id: message.id, result });
  }
  if (message.method === "subscriptions/listen") return await handleListen(message, link, ctx);
  if (input) {
    if (progressTokenOf(message) === undefined && choice.envelope.logLevel === undefined) {
      const served = await startTakingInput(message, choice.envelope, link, ctx);
      return answer(served.body, served.status);
    }
    // Progress and logs go on the request's own SSE stream, then the answer ends it.
    return answerOnStream(message, ctx, async (send) => {
      const served = await startTakingInput(message, choice.envelope, link, ctx, send);
      return served.body;
    });
  }
  const response = await link.call(messageFor2025Backend(message), undefined, ctx.clientAddress);
  const serverInfo = link.initializeResult.serverInfo as Json | undefined;
  // A method the server lacks is 404 in this revision, whoever found out.
  const status = response.error?.code === RpcErrorCode.methodNotFound ? 404 : 200;
  return answer(responseFor2026(message.method, response, serverInfo), status);
}

/** A 2026 notification: `notifications/cancelled` is the only one a client sends, and a
 * request of this lane is cancelled by closing its response instead; nothing to forward. */
export function handleStatelessNotification(_choice: StatelessNotification): Response {
  return new Response(null, { status: 202 });
}

/** A request the revision check refused: its status, and the JSON-RPC error with its id. */
export function refusalResponse(refusal: Refusal): Response {
  return answer(errorBody(refusal.id, refusal.code, refusal.message, refusal.data), refusal.status);
}

function answer(body: RpcResponse | ReturnType<typeof errorBody>, status = 200): Response {
  return jsonResponse(body, status);
}

/** Why no link could be had, as the client must hear it. */
function linkRefusal(error: unknown, choice: StatelessRequest, ctx: FrontContext): Response {
  const id = choice.message.id;
  if (error instanceof SessionLimitError) return tooManySessions(error);
  if (error instanceof CredentialRequiredError) {
    return answer(errorBody(id, RpcErrorCode.backendError, error.message, { url: error.pageUrl }));
  }
  return backendFailedToStart(ctx, error, id);
}
