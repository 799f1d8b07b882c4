/**
 * One client session bound to its own backend connection (session_backend.ts). Messages pass
 * through unchanged; the session relays them, keeps the books (which client requests wait:
 * session_requests.ts; how busy it is: activity.ts; what `initialize` settled:
 * session_handshake.ts) and ends once, telling its client why.
 */
import type { ServerConfig } from "../../config/types.ts";
import type { Clock } from "../../core/clock.ts";
import type { Deadlines } from "../../core/deadlines.ts";
import type { SessionId } from "../../core/ids.ts";
import type { Principal } from "../../core/principal.ts";
import type { Logger } from "../../observability/logger.ts";
import type { AuditLog } from "../../observability/audit.ts";
import type { JSONRPCMessage } from "../../sdk.ts";
import type { Backend } from "../backends/connect.ts";
import {
  classify,
  errorResponse,
  idInFlightMessage,
  type RequestId,
  RpcErrorCode,
  type RpcRequest,
  type RpcResponse,
} from "../protocol/jsonrpc.ts";
import { Activity } from "./activity.ts";
import { failedSendAnswer, SessionBackend } from "./session_backend.ts";
import { Handshake, type Settled } from "./session_handshake.ts";
import { type PendingRequest, PendingRequests } from "./session_requests.ts";
import type { ToolGate } from "../../core/tool_gate.ts";
import { visibleTools } from "../tools/tool_gate.ts";
import { type CallChecks, callChecks, callRefusal } from "./session_call_checks.ts";
import type { ClientSide, SessionHolds } from "../approvals/call_hold.ts";
import type { SessionTools } from "../tools/session_tools.ts";
import type { ToolIntegrity } from "../tools/tool_integrity.ts";

/** Where the session sends what the backend says. Implemented by each front transport. */
export interface ClientChannel {
  /** `related` is the client request this message belongs to, when the gateway knows it. */
  deliver(message: JSONRPCMessage, related?: RequestId): void;
  /** The session is over; `reason` says why, for the client's benefit. */
  ended(reason: string): void;
}

export interface SessionOptions {
  id: SessionId;
  server: ServerConfig;
  principal: Principal;
  backend: Backend;
  requestTimeoutMs: number;
  /** The setting `requestTimeoutMs` comes from, named when a request times out. */
  requestTimeoutSetting?: string;
  logger: Logger;
  clock: Clock;
  /** Where the request timeouts run. */
  deadlines: Deadlines;
  /** Where calls are recorded: who called which tool, outcome, duration. */
  audit?: AuditLog;
  /** A session continued from elsewhere: what its `initialize` settled there. */
  resumed?: Settled;
  /** Which tools the caller may see and call; absent: all (tool_gate.ts). */
  toolGate?: ToolGate;
  /** Tool integrity: lists held against the approved definitions, calls of held tools refused. */
  toolIntegrity?: ToolIntegrity;
  /** Calls held for a person's approval (approvals/call_hold.ts); absent: none. */
  holds?: (side: ClientSide) => SessionHolds;
  /**
   * Told once the backend has accepted initialize; the client gets the answer (and with it the
   * session id) only when what this returns has settled, so the session is known everywhere
   * it must be (other replicas) before the client can use it.
   */
  onInitialized?: (session: Session) => void | Promise<void>;
}

export class Session {
  readonly id: SessionId;
  readonly server: ServerConfig;
  readonly principal: Principal;
  /** When the session was last used, and the client streams it holds open. */
  readonly activity: Activity;
  readonly #handshake: Handshake;
  #channel?: ClientChannel;
  readonly #pending: PendingRequests;
  readonly #backend: SessionBackend;
  #closed = false;
  #released = false;
  readonly #stopped = Promise.withResolvers<void>();
  #closeListeners: ((session: Session) => void)[] = [];
  readonly #options: SessionOptions;
  /** This session's side of tool integrity (session_tools.ts). */
  readonly #tools?: SessionTools;
  /** What a tools/call passes before it is sent (session_call_checks.ts). */
  readonly #checks: CallChecks;

  constructor(options: SessionOptions) {
    this.#options = options;
    this.id = options.id;
    this.server = options.server;
    this.principal = options.principal;
    this.activity = new Activity(options.clock);
    this.#handshake = new Handshake(options.resumed);
    this.#checks = callChecks(options, {
      deliver: (message, related) => this.#channel?.deliver(message, related),
      capabilities: () => this.clientCapabilities,
      send: (message) => this.#send(message),
    });
    this.#tools = this.#checks.tools;
    this.#pending = new PendingRequests({
      clock: options.clock,
      deadlines: options.deadlines,
      timeoutMs: options.requestTimeoutMs,
      timeoutSetting: options.requestTimeoutSetting,
      audit: options.audit,
      subject: {
        session: this.id,
        server: this.server.name,
        principal: this.principal,
        config: this.server,
      },
      onTimeout: (pending, message) => this.#timedOut(pending, message),
    });
    this.#backend = new SessionBackend(options.backend, options.logger, {
      message: (message) => this.#fromBackend(message),
      ended: (reason) => void this.close(reason),
      sessionEnded: () => this.#closed,
    });
  }

  /** Protocol version agreed at initialize; 2025-03-26 until then (the spec's default). */
  get protocolVersion(): string {
    return this.#handshake.protocolVersion;
  }

  /** What the client said it can do, from its initialize request. */
  get clientCapabilities(): Record<string, unknown> {
    return this.#handshake.clientCapabilities;
  }

  /** Why the gateway could not get the backend through `initialize` (session_handshake.ts). */
  get initializeFailure(): string | undefined {
    return this.#handshake.failure;
  }

  /** Open client streams (`activity.holdStream`); a session holding one is not idle. */
  get openStreams(): number {
    return this.activity.openStreams;
  }

  get closed(): boolean {
    return this.#closed;
  }

  get pendingCount(): number {
    return this.#pending.size;
  }

  /** True while a client request with this id waits for its answer. */
  isInFlight(id: RequestId): boolean {
    return this.#pending.has(id);
  }

  get channel(): ClientChannel | undefined {
    return this.#channel;
  }

  attach(channel: ClientChannel): void {
    this.#channel = channel;
  }

  onClose(listener: (session: Session) => void): void {
    this.#closeListeners.push(listener);
  }

  async start(): Promise<void> {
    await this.#backend.start();
  }

  /**
   * A message from the client (at address `from`, when known: the audit names it). Errors for
   * requests are answered through the channel.
   */
  async fromClient(message: JSONRPCMessage, from?: string): Promise<void> {
    this.activity.touch();
    const classified = classify(message);
    if (!classified) return;
    if (this.#closed) {
      if (classified.kind === "request") {
        this.#reply(classified.message.id, RpcErrorCode.backendError, "the session has ended");
      }
      return;
    }
    if (classified.kind === "request") return await this.#request(classified.message, from);
    if (classified.kind === "response" && this.#checks.holds?.ownAnswer(classified.message)) return;
    if (
      classified.kind === "notification" && classified.message.method === "notifications/cancelled"
    ) {
      const requestId = classified.message.params?.requestId as RequestId | undefined;
      if (requestId !== undefined) {
        this.#pending.cancelled(requestId);
        this.#checks.holds?.cancelled(requestId);
      }
    }
    await this.#send(message).catch((error) =>
      this.#options.logger.warn("could not forward to backend", { error })
    );
  }

  async #request(request: RpcRequest, from?: string): Promise<void> {
    if (this.#pending.has(request.id)) {
      return this.#reply(request.id, RpcErrorCode.invalidRequest, idInFlightMessage(request.id));
    }
    if (request.method === "initialize") this.#handshake.requested(request);
    const checked = callRefusal(request, this.#checks);
    // A call held for approval may wait long: the session goes on meanwhile (a 2026 link's
    // call must return to be driven, and asked for its input).
    if (checked instanceof Promise && this.#checks.holds) {
      const failed = "the gateway could not check this call; try again";
      return void checked.then((refusal) => this.#forward(request, from, refusal)).catch(
        () => this.#reply(request.id, RpcErrorCode.internalError, failed),
      );
    }
    await this.#forward(request, from, checked instanceof Promise ? await checked : checked);
  }

  /** Sends `request` on unless `refusal` answers it (session_call_checks.ts). */
  async #forward(request: RpcRequest, from?: string, refusal?: JSONRPCMessage): Promise<void> {
    if (refusal) {
      this.#pending.refused(request);
      return this.#channel?.deliver(refusal, request.id);
    }
    if (this.#closed) {
      return this.#reply(request.id, RpcErrorCode.backendError, "the session has ended");
    }
    const { trace } = this.#pending.add(request, from);
    try {
      // Traced: the request goes with the backend span in its _meta (request_trace.ts).
      if (trace) await trace.send(request, (message) => this.#send(message as JSONRPCMessage));
      else await this.#send(request as JSONRPCMessage);
    } catch (error) {
      const pending = this.#pending.settle(request.id);
      if (!pending) return;
      const body = failedSendAnswer(error, request.method, this.clientCapabilities);
      this.#pending.record(pending, "error", body.code);
      if (request.method === "initialize") this.#handshake.failure = body.handshakeFailure;
      this.#channel?.deliver(
        errorResponse(request.id, body.code, body.message, body.data),
        request.id,
      );
      // A session whose initialize failed is of no use to anyone: end it now.
      if (request.method === "initialize") void this.close("the backend could not be initialized");
    }
  }

  /** A request's time ran out: the client is told, the backend is told to stop working on it. */
  #timedOut(pending: PendingRequest, message: string): void {
    const { id, method } = pending;
    if (method === "initialize") this.#handshake.failure = message;
    this.#reply(id, RpcErrorCode.requestTimeout, message);
    this.#backend.cancel(id, "request timed out at the gateway");
    // A backend that never got through initialize leaves a session nobody can use.
    if (method === "initialize") void this.close(message);
  }

  #send(message: JSONRPCMessage): Promise<void> {
    return this.#backend.send(message);
  }

  #reply(id: RequestId, code: number, message: string): void {
    this.#channel?.deliver(errorResponse(id, code, message), id);
  }

  #fromBackend(message: JSONRPCMessage): void {
    this.activity.touch();
    const classified = classify(message);
    if (!classified) return;
    if (classified.kind === "response") {
      const response = classified.message;
      if (this.#checks.own.answered(response)) return;
      const pending = this.#pending.answered(response);
      if (!pending) {
        this.#options.logger.debug("dropped a response to no pending request", {
          id: response.id,
        });
        return;
      }
      if (pending.method === "initialize" && response.error) {
        this.#channel?.deliver(message, response.id);
        void this.close("the backend refused to initialize");
        return;
      }
      if (pending.method === "tools/list" && response.result) {
        return this.#deliverTools(response);
      }
      const ready = pending.method === "initialize" ? this.#initialized(response) : undefined;
      if (ready) void ready.then(() => this.#channel?.deliver(message, response.id));
      else this.#channel?.deliver(message, response.id);
      return;
    }
    let related: RequestId | undefined;
    if (
      classified.kind === "notification" &&
      classified.message.method === "notifications/tools/list_changed"
    ) this.#tools?.listChanged();
    if (
      classified.kind === "notification" && classified.message.method === "notifications/progress"
    ) {
      related = this.#pending.progressed(classified.message.params?.progressToken);
    }
    this.#channel?.deliver(message, related);
  }

  /**
   * A tools/list answer: held against the approved definitions (tool integrity), then only
   * what the caller may use (the tool gate).
   */
  #deliverTools(response: RpcResponse): void {
    const gate = this.#options.toolGate;
    const deliver = (checked: RpcResponse) => {
      const shown = gate && checked.result ? visibleTools(checked, gate) : checked;
      this.#channel?.deliver(shown as JSONRPCMessage, response.id);
    };
    const tools = this.#tools;
    if (!tools) return deliver(response);
    void tools.reviewList(response).then(deliver);
  }

  /** The backend accepted initialize; the client's answer waits for what this returns. */
  #initialized(response: RpcResponse): void | Promise<void> {
    if (!response.result) return;
    const protocolVersion = this.#handshake.accepted(response);
    if (protocolVersion !== undefined) this.#backend.agreed(protocolVersion);
    return this.#options.onInitialized?.(this);
  }

  /** Ends the session: pending requests get an error, the backend is stopped. */
  async close(reason: string): Promise<void> {
    await this.#end(reason, () => this.#backend.close());
  }

  /**
   * Ends this process's part of the session and leaves the backend session running, for
   * whoever continues it.
   */
  async release(reason: string): Promise<void> {
    this.#released = true;
    await this.#end(reason, () => this.#backend.detach());
  }

  /** True when the session was let go (`release`) rather than ended. */
  get released(): boolean {
    return this.#released;
  }

  /** The backend said the session it held is gone (HTTP 404): the client must start anew. */
  get backendSessionGone(): boolean {
    return this.#backend.gone;
  }

  /** Settles once the session has ended and its backend has stopped (a child has exited). */
  get stopped(): Promise<void> {
    return this.#stopped.promise;
  }

  /** The backend's session id, when another process could continue this session. */
  get sharedBackendSessionId(): string | undefined {
    return this.#backend.sharedSessionId;
  }

  /** Whether another replica could continue this session's backend connection. */
  get continuable(): boolean {
    return this.#backend.continuable;
  }

  /** Whether the backend speaks 2026-07-28 (known once initialize has been answered). */
  get backendSpeaksModern(): boolean {
    return this.#backend.speaksModern;
  }

  async #end(reason: string, stopBackend: () => Promise<void>): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#pending.all().some((pending) => pending.method === "initialize")) {
      this.#handshake.endedBeforeAnswer(reason);
    }
    this.#pending.endAll(
      reason,
      (id, message) => this.#reply(id, RpcErrorCode.backendError, message),
    );
    this.#channel?.ended(reason);
    this.#tools?.close();
    this.#checks.holds?.close();
    for (const listener of this.#closeListeners) listener(this);
    try {
      await stopBackend();
    } finally {
      this.#stopped.resolve();
    }
  }
}
