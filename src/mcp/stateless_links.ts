/**
 * Backend links for clients without sessions (MCP 2026-07-28). A 2026 client sends each
 * request on its own; a backend that speaks 2025-11-25 needs a session, and a stdio backend is
 * never shared between people. So the gateway keeps one link per (person, server): a session
 * it opened and initialized itself, reused across that person's requests, and ended by the
 * registry's idle reaping like any session (it counts against `limits.sessionsPerUser`).
 *
 * Requests of several clients of one person share the link; each gets an id of the gateway's
 * own on it, so two clients that both number their requests from 1 never collide.
 */
import type { ServerConfig } from "../config/types.ts";
import type { Clock } from "../core/clock.ts";
import type { Principal } from "../core/principal.ts";
import type { JSONRPCMessage } from "../sdk.ts";
import { VERSION } from "../version.ts";
import {
  classify,
  errorResponse,
  type RequestId,
  RpcErrorCode,
  type RpcNotification,
  type RpcRequest,
  type RpcResponse,
} from "./jsonrpc.ts";
import { LATEST_SESSION_PROTOCOL_VERSION, takesInput } from "./protocol_versions.ts";
import type { ClientChannel, Session } from "./session.ts";
import { SessionLimitError, type SessionRegistry } from "./sessions.ts";
import { WaitingInputs } from "./stateless_inputs.ts";

/** What the backend told the gateway's own `initialize`. */
export type InitializeResult = Record<string, unknown>;

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

  /** Where the call's progress goes, if its client asked for progress. */
  onNotification?: (notification: RpcNotification) => void;

  notify(notification: RpcNotification): void {
    if (notification.method === "notifications/progress") this.onNotification?.(notification);
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

  /** Tells the backend the call is abandoned (its client stopped asking). */
  async cancel(reason: string): Promise<void> {
    if (this.#response) return;
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
class LinkChannel implements ClientChannel {
  readonly #calls = new Map<RequestId, LinkCall>();
  #endedWith?: string;

  constructor(private readonly answerBackend: (message: JSONRPCMessage) => void) {}

  track(call: LinkCall): void {
    if (this.#endedWith !== undefined) return call.settle(ended(call.id, this.#endedWith));
    this.#calls.set(call.id, call);
  }

  deliver(message: JSONRPCMessage, related?: RequestId): void {
    const classified = classify(message);
    if (!classified) return;
    if (classified.kind === "notification") {
      // Progress of a call (its token is the call's own id on the link); nothing else has a
      // stateless client to go to (logs need a logLevel no call asked for, list changes a
      // listen stream).
      if (related !== undefined) this.#calls.get(related)?.notify(classified.message);
      return;
    }
    if (classified.kind === "response") {
      const call = this.#calls.get(classified.message.id);
      this.#calls.delete(classified.message.id);
      call?.settle(classified.message);
    } else if (classified.kind === "request") {
      const request = classified.message;
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

function progressTokenOf(request: RpcRequest): string | number | undefined {
  const meta = request.params?._meta as Record<string, unknown> | undefined;
  const token = meta?.progressToken;
  return typeof token === "string" || typeof token === "number" ? token : undefined;
}

function ended(id: RequestId, reason: string): RpcResponse {
  return {
    jsonrpc: "2.0",
    id,
    error: { code: RpcErrorCode.backendError, message: `the backend link ended: ${reason}` },
  };
}

/** One person's initialized session with one backend, used for stateless requests. */
export class StatelessLink {
  #next = 0;
  /** A call that may take input holds the link's one input slot from its start to its answer. */
  #inputClaimed = false;

  constructor(
    private readonly session: Session,
    private readonly channel: LinkChannel,
    private readonly clock: Clock,
    /** What the backend answered to the gateway's `initialize`. */
    readonly initializeResult: InitializeResult,
  ) {}

  get closed(): boolean {
    return this.session.closed;
  }

  onClosed(listener: () => void): void {
    this.session.onClose(() => listener());
  }

  /**
   * Takes the link's input slot if it is free. A backend request for input is attributed to
   * the one call holding it, so a link carries one such call at a time, and a second one goes
   * to another link of the person's.
   */
  claimInput(): boolean {
    if (this.#inputClaimed || this.closed) return false;
    this.#inputClaimed = true;
    return true;
  }

  /** Sends `request` under an id of the link's own; the call says what came of it. */
  async start(
    request: RpcRequest,
    onProgress?: (notification: RpcNotification) => void,
  ): Promise<LinkCall> {
    const id = `gh-${++this.#next}`;
    const call = new LinkCall(
      id,
      takesInput(request.method),
      (message) => this.toBackend(message),
      this.clock,
    );
    if (call.takesInput) call.settled.then(() => this.#inputClaimed = false);
    const sent = { ...request, id };
    const token = progressTokenOf(request);
    if (token !== undefined && onProgress) {
      // Clients number their progress tokens as they like; on a shared link the call's own id
      // stands in for the token, and the client's is put back on the way out.
      const params = request.params ?? {};
      sent.params = { ...params, _meta: { ...params._meta as object, progressToken: id } };
      call.onNotification = (notification) =>
        onProgress({
          ...notification,
          params: { ...notification.params, progressToken: token },
        });
    }
    this.channel.track(call);
    await this.session.fromClient(sent as JSONRPCMessage);
    return call;
  }

  /** Sends `request` and waits for its answer, under `request.id`; for calls taking no input. */
  async call(request: RpcRequest): Promise<RpcResponse> {
    const call = await this.start(request);
    const step = await call.next();
    const response = step.kind === "response" ? step.response : ended(call.id, "unexpected input");
    return { ...response, id: request.id };
  }

  /** A message for the backend as it is (answers to its requests, notifications). */
  async toBackend(message: JSONRPCMessage): Promise<void> {
    await this.session.fromClient(message);
  }
}

/** The links of this process, one per (person, server), opened on first use. */
export class StatelessLinks {
  /** The person's links to a server, by `person\nserver`. */
  readonly #pools = new Map<string, Set<Promise<StatelessLink>>>();

  /** Calls waiting for their client's input, by the reference their requestState carries. */
  readonly waiting: WaitingInputs;

  constructor(
    private readonly sessions: SessionRegistry,
    private readonly clock: Clock,
    /** Keys that seal requestState: the current one first, then earlier ones still accepted. */
    readonly stateKeys: CryptoKey[],
    inputTtlMs: number,
  ) {
    this.waiting = new WaitingInputs(clock, inputTtlMs);
  }

  /**
   * A link of the person's to `server`: with `forInput`, one whose input slot this call now
   * holds (see StatelessLink.claimInput). Opens and initializes another link when none fits.
   * Throws what `SessionRegistry.open` throws: a session limit, a missing credential.
   */
  async linkFor(
    server: ServerConfig,
    principal: Principal,
    forInput = false,
  ): Promise<StatelessLink> {
    const key = `${principal.id}\n${server.name}`;
    let pool = this.#pools.get(key);
    if (!pool) this.#pools.set(key, pool = new Set());
    for (const entry of [...pool]) {
      const link = await entry.catch(() => undefined);
      if (!link || link.closed) {
        pool.delete(entry);
        continue;
      }
      if (!forInput || link.claimInput()) return link;
    }
    const opening = this.#open(server, principal);
    pool.add(opening);
    const forget = () => {
      pool.delete(opening);
      if (pool.size === 0 && this.#pools.get(key) === pool) this.#pools.delete(key);
    };
    opening.then((link) => link.onClosed(forget), forget);
    let link: StatelessLink;
    try {
      link = await opening;
    } catch (error) {
      if (!forInput || !(error instanceof SessionLimitError)) throw error;
      // At the person's session limit an input call shares a busy link rather than fail: a
      // request for input there that cannot be attributed is refused to the backend.
      for (const entry of [...pool]) {
        const other = await entry.catch(() => undefined);
        if (other && !other.closed) return other;
      }
      throw error;
    }
    if (forInput && !link.claimInput()) return await this.linkFor(server, principal, forInput);
    return link;
  }

  async #open(server: ServerConfig, principal: Principal): Promise<StatelessLink> {
    const session = await this.sessions.open(server, principal);
    const channel = new LinkChannel((message) => void session.fromClient(message));
    session.attach(channel);
    const toBackend = (message: JSONRPCMessage) => session.fromClient(message);
    const init = new LinkCall("gh-initialize", false, toBackend, this.clock);
    channel.track(init);
    await session.fromClient({
      jsonrpc: "2.0",
      id: "gh-initialize",
      method: "initialize",
      params: {
        protocolVersion: LATEST_SESSION_PROTOCOL_VERSION,
        // What a 2026 client may be asked through input_required; each request's own
        // capabilities decide, when the backend asks, whether its client is asked.
        capabilities: { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} },
        clientInfo: { name: "gatehouse", version: VERSION },
      },
    } as JSONRPCMessage);
    const step = await init.next();
    const answer = step.kind === "response" ? step.response : ended(init.id, "no answer");
    if (!answer.result || session.initializeFailure !== undefined) {
      const why = session.initializeFailure ?? answer.error?.message ?? "no answer";
      void session.close("the backend refused initialize");
      throw new Error(why);
    }
    await session.fromClient({ jsonrpc: "2.0", method: "notifications/initialized" });
    return new StatelessLink(session, channel, this.clock, answer.result);
  }
}
