/**
 * The calls on a stateless link (stateless_links.ts) and the link's session side: each request
 * sent under the link's own id, its answer routed back, its progress relayed, and what the
 * backend asks of the client handed to the one call that may take input (or refused when no
 * single call can be said to have asked).
 */
import type { Clock } from "../../core/clock.ts";
import type { JSONRPCMessage } from "../../sdk.ts";
import {
  classify,
  errorResponse,
  type RequestId,
  RpcErrorCode,
  type RpcNotification,
  type RpcRequest,
  type RpcResponse,
} from "../protocol/jsonrpc.ts";
import type { ClientChannel } from "../sessions/session.ts";
import { isLogLevel, LOG_LEVELS, type LogLevel } from "../protocol/protocol_versions.ts";
import { unaskableError } from "../protocol/gateway_elicitation.ts";

/** How long a call's first request for input waits for more before the client is asked. */
const INPUT_BATCH_MS = 20;

/** What a call on a link comes to next: its answer, or requests for input from its client. */
export type CallStep =
  | { kind: "response"; response: RpcResponse }
  | { kind: "input"; requests: RpcRequest[] };

/**
 * One request on a link, from the gateway's send to the backend's answer. Requests the backend
 * makes of the client while it is the only call on the link that may take input (tools/call,
 * prompts/get, resources/read) are its own; `next()` hands them out in batches.
 */
export class LinkCall {
  #response?: RpcResponse;
  #inbox: RpcRequest[] = [];
  #wake?: () => void;
  readonly #settled = Promise.withResolvers<void>();
  /** Gathering requests for input: only the answer ends the moment early. */
  #batching = false;

  constructor(
    readonly id: RequestId,
    readonly takesInput: boolean,
    private readonly toBackend: (message: JSONRPCMessage) => Promise<void>,
    private readonly clock: Clock,
  ) {}

  /** The backend answered (or the link ended). */
  settle(response: RpcResponse): void {
    this.#response = response;
    this.#settled.resolve();
    this.#wake?.();
  }

  /** Where the call's progress (and its logs, when it set a level) go, if it has a stream. */
  onNotification?: (notification: RpcNotification) => void;
  /** The least severe log message the call's client asked for (`_meta` logLevel); none: none. */
  logLevel?: LogLevel;

  notify(notification: RpcNotification): void {
    if (notification.method === "notifications/progress") this.onNotification?.(notification);
  }

  /** A backend log message this call is the one certain owner of: given on if it asked. */
  log(message: RpcNotification): void {
    const level = message.params?.level;
    if (this.logLevel === undefined || !isLogLevel(level)) return;
    if (LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(this.logLevel)) {
      this.onNotification?.(message);
    }
  }

  /** The backend asked the client something while this call was waiting. */
  ask(request: RpcRequest): void {
    this.#inbox.push(request);
    if (!this.#batching) this.#wake?.();
  }

  /** Resolves once the call has its answer (or its link ended). */
  get settled(): Promise<void> {
    return this.#settled.promise;
  }

  /** The answer, or the requests for input that came first (gathered for a moment). */
  async next(): Promise<CallStep> {
    for (;;) {
      if (this.#response) return { kind: "response", response: this.#response };
      if (this.#inbox.length > 0) {
        this.#batching = true;
        await this.#until(INPUT_BATCH_MS);
        this.#batching = false;
        if (this.#response) return { kind: "response", response: this.#response };
        return { kind: "input", requests: this.#inbox.splice(0) };
      }
      await this.#until();
    }
  }

  /** Sends the client's answers (or the gateway's refusals) to the backend's requests. */
  async answer(responses: readonly RpcResponse[]): Promise<void> {
    for (const response of responses) await this.toBackend(response as JSONRPCMessage);
  }

  /**
   * Tells the backend the call is abandoned (its client stopped asking), and ends it here: a
   * backend answers no cancelled request (MCP says it should not), so a call left waiting for
   * that answer would hold its link's input slot for the link's whole life, and each later
   * call of the person's that may take input would start another backend.
   */
  async cancel(reason: string): Promise<void> {
    if (this.#response) return;
    const message = `the call was cancelled: ${reason}`;
    this.settle({
      jsonrpc: "2.0",
      id: this.id,
      error: { code: RpcErrorCode.backendError, message },
    });
    await this.toBackend({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: this.id, reason },
    });
  }

  #until(ms?: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = ms === undefined ? undefined : this.clock.setTimeout(done, ms);
      const wake = () => done();
      this.#wake = wake;
      function done() {
        timer?.clear();
        resolve();
      }
    });
  }
}

/** The session side of a link: answers and the backend's own requests routed to their call. */
export class LinkChannel implements ClientChannel {
  readonly #calls = new Map<RequestId, LinkCall>();
  #endedWith?: string;

  constructor(
    private readonly answerBackend: (message: JSONRPCMessage) => void,
    /** A notification of no call's (list changes, resource updates): for listen streams. */
    private readonly unsolicited: (notification: RpcNotification) => void,
  ) {}

  track(call: LinkCall): void {
    if (this.#endedWith !== undefined) return call.settle(ended(call.id, this.#endedWith));
    this.#calls.set(call.id, call);
    // A call ended here (cancelled) is forgotten too: a late answer to it finds no one.
    void call.settled.then(() => {
      if (this.#calls.get(call.id) === call) this.#calls.delete(call.id);
    });
  }

  deliver(message: JSONRPCMessage, related?: RequestId): void {
    const classified = classify(message);
    if (!classified) return;
    if (classified.kind === "notification") {
      // Progress of a call (its token is the call's own id on the link), a log message, or a
      // change for the person's listen streams. A 2025 backend's log names no request: it goes
      // to the link's one call in flight, and nowhere when there are several.
      const notification = classified.message;
      if (related !== undefined) this.#calls.get(related)?.notify(notification);
      else if (notification.method !== "notifications/message") this.unsolicited(notification);
      else if (this.#calls.size === 1) this.#calls.values().next().value!.log(notification);
      return;
    }
    if (classified.kind === "response") {
      const call = this.#calls.get(classified.message.id);
      this.#calls.delete(classified.message.id);
      call?.settle(classified.message);
    } else if (classified.kind === "request") {
      const request = classified.message;
      // The gateway's own request for a call (an approval's page) says which call it is for.
      const own = related !== undefined && unaskableError(request) && this.#calls.get(related);
      if (own) return own.ask(request);
      // Only a call that may take input, and only when it is the one such call: a request
      // the gateway cannot attribute with certainty is refused rather than guessed.
      const takers = [...this.#calls.values()].filter((call) => call.takesInput);
      if (request.method !== "ping" && takers.length === 1) return takers[0].ask(request);
      this.answerBackend(refuseServerRequest(request, takers.length));
    }
  }

  ended(reason: string): void {
    this.#endedWith = reason;
    for (const [id, call] of this.#calls) call.settle(ended(id, reason));
    this.#calls.clear();
  }
}

/** The backend's requests that no waiting call can take: `ping` answered, the rest refused. */
function refuseServerRequest(request: RpcRequest, takers: number): JSONRPCMessage {
  if (request.method === "ping") return { jsonrpc: "2.0", id: request.id, result: {} };
  const why = takers === 0
    ? "no request of its client is waiting for input"
    : "several requests of its client are waiting, and the gateway cannot tell which one asks";
  return errorResponse(
    request.id,
    RpcErrorCode.methodNotFound,
    `${request.method} cannot reach a client without a session (MCP 2026-07-28): ${why}`,
  );
}

export function progressTokenOf(request: RpcRequest): string | number | undefined {
  const meta = request.params?._meta as Record<string, unknown> | undefined;
  const token = meta?.progressToken;
  return typeof token === "string" || typeof token === "number" ? token : undefined;
}

/**
 * The answer a step comes to on a call that takes no input (a request passed through as it is):
 * its response; else, when the gateway itself asked (an approval's page), the error it states
 * for clients that cannot be asked, the call ending here; else the link's refusal.
 */
export async function answerOf(call: LinkCall, step: CallStep): Promise<RpcResponse> {
  if (step.kind === "response") return step.response;
  const unaskable = step.requests.map(unaskableError).find((error) => error !== undefined);
  if (!unaskable) return ended(call.id, "unexpected input");
  await call.cancel("its client was told the page it needs");
  return { jsonrpc: "2.0", id: call.id, error: unaskable } as RpcResponse;
}

export function ended(id: RequestId, reason: string): RpcResponse {
  return {
    jsonrpc: "2.0",
    id,
    error: { code: RpcErrorCode.backendError, message: `the backend link ended: ${reason}` },
  };
}
