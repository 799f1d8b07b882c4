/**
 * One client session bound to its own backend connection. Messages pass through unchanged;
 * the session only keeps the books: which client requests are waiting (for timeouts and for
 * routing progress), and what to tell the client when the backend fails.
 */
import type { ServerConfig } from "../config/types.ts";
import type { SessionId } from "../core/ids.ts";
import type { Principal } from "../core/principal.ts";
import type { Logger } from "../observability/logger.ts";
import { AUDITED_METHODS, type AuditLog, type AuditOutcome } from "../observability/audit.ts";
import type { JSONRPCMessage } from "../sdk.ts";
import { CredentialRequiredError } from "../core/credential_required.ts";
import { type Deadline, deadlines } from "../core/deadlines.ts";
import type { Backend } from "./backends/connect.ts";
import { AnswerTooLargeError } from "./backends/bounded_answers.ts";
import { BackendProcessEnded } from "./backends/stdio.ts";
import { credentialRpcError, supportsUrlElicitation } from "./credential_errors.ts";
import { ASSUMED_PROTOCOL_VERSION } from "./protocol_versions.ts";
import {
  classify,
  errorResponse,
  idInFlightMessage,
  idKey,
  type RequestId,
  RpcErrorCode,
  type RpcRequest,
  type RpcResponse,
} from "./jsonrpc.ts";

/** Where the session sends what the backend says. Implemented by each front transport. */
export interface ClientChannel {
  /** `related` is the client request this message belongs to, when the gateway knows it. */
  deliver(message: JSONRPCMessage, related?: RequestId): void;
  /** The session is over; `reason` says why, for the client's benefit. */
  ended(reason: string): void;
}

interface PendingRequest {
  id: RequestId;
  method: string;
  progressToken?: string | number;
  timer: Deadline;
  startedAt: number;
  /** For audited methods: what was called, and with which arguments (when audited). */
  audit?: { target?: string; arguments?: unknown };
}

export interface SessionOptions {
  id: SessionId;
  server: ServerConfig;
  principal: Principal;
  backend: Backend;
  requestTimeoutMs: number;
  logger: Logger;
  now: () => number;
  /** Where calls are recorded: who called which tool, outcome, duration. */
  audit?: AuditLog;
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
  /** Protocol version agreed at initialize; 2025-03-26 until then (the spec's default). */
  protocolVersion = ASSUMED_PROTOCOL_VERSION;
  lastActivity: number;
  /**
   * Which session was active last, as a sequence: two sessions active in the same millisecond
   * still have an order (the least recently used one makes room at the limit).
   */
  recency: number;
  static #activity = 0;
  /** Open client streams; a session holding one is not idle. */
  openStreams = 0;
  /** What the client said it can do, from its initialize request. */
  clientCapabilities: Record<string, unknown> = {};
  /** Other replicas can continue this session: its record is in shared storage. */
  sharedRecord = false;
  /** When this replica last made sure it owns the shared record. */
  ownershipCheckedAt = 0;

  #channel?: ClientChannel;
  #pending = new Map<string, PendingRequest>();
  #closed = false;
  #closeListeners: ((session: Session) => void)[] = [];
  readonly #options: SessionOptions;

  constructor(options: SessionOptions) {
    this.#options = options;
    this.id = options.id;
    this.server = options.server;
    this.principal = options.principal;
    this.lastActivity = options.now();
    this.recency = ++Session.#activity;
    const transport = options.backend.transport;
    transport.onmessage = (message) => this.#fromBackend(message);
    transport.onerror = (error) => this.#backendError(error);
    transport.onclose = () => this.close(this.#lastError ?? "the backend closed the connection");
  }

  get closed(): boolean {
    return this.#closed;
  }

  get pendingCount(): number {
    return this.#pending.size;
  }

  /** True while a client request with this id waits for its answer. */
  isInFlight(id: RequestId): boolean {
    return this.#pending.has(idKey(id));
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
    await this.#options.backend.transport.start();
  }

  /** Marks the session active now (a message, or the end of one of its streams). */
  touch(): void {
    this.lastActivity = this.#options.now();
    this.recency = ++Session.#activity;
  }

  /** A message from the client. Errors for requests are answered through the channel. */
  async fromClient(message: JSONRPCMessage): Promise<void> {
    this.touch();
    const classified = classify(message);
    if (!classified) return;
    if (this.#closed) {
      if (classified.kind === "request") {
        this.#reply(classified.message.id, RpcErrorCode.backendError, "the session has ended");
      }
      return;
    }
    if (classified.kind === "request") return await this.#request(classified.message);
    if (
      classified.kind === "notification" && classified.message.method === "notifications/cancelled"
    ) {
      const requestId = classified.message.params?.requestId as RequestId | undefined;
      if (requestId !== undefined) this.#finish(this.#settle(requestId), "cancelled");
    }
    await this.#send(message).catch((error) =>
      this.#options.logger.warn("could not forward to backend", { error })
    );
  }

  async #request(request: RpcRequest): Promise<void> {
    const key = idKey(request.id);
    if (this.#pending.has(key)) {
      return this.#reply(request.id, RpcErrorCode.invalidRequest, idInFlightMessage(request.id));
    }
    if (request.method === "initialize") {
      this.clientCapabilities = (request.params?.capabilities as Record<string, unknown>) ?? {};
    }
    const meta = request.params?._meta as Record<string, unknown> | undefined;
    const progressToken = meta?.progressToken as string | number | undefined;
    this.#pending.set(key, {
      id: request.id,
      method: request.method,
      progressToken,
      timer: this.#startTimer(request.id, request.method),
      startedAt: this.#options.now(),
      audit: this.#auditDetails(request),
    });
    try {
      await this.#send(request as JSONRPCMessage);
    } catch (error) {
      const pending = this.#settle(request.id);
      if (!pending) return;
      if (error instanceof CredentialRequiredError) {
        const body = credentialRpcError(error, supportsUrlElicitation(this.clientCapabilities));
        this.#finish(pending, "error", body.code);
        this.#channel?.deliver(
          errorResponse(request.id, body.code, body.message, body.data),
          request.id,
        );
      } else {
        this.#finish(pending, "error", RpcErrorCode.backendError);
        const why = describeSendFailure(error, request.method);
        if (request.method === "initialize") this.#initializeFailure = why;
        this.#reply(request.id, RpcErrorCode.backendError, why);
      }
      // A session whose initialize failed is of no use to anyone: end it now.
      if (request.method === "initialize") void this.close("the backend could not be initialized");
    }
  }

  #startTimer(id: RequestId, method: string): Deadline {
    const timeoutMs = this.#options.requestTimeoutMs;
    return deadlines.add(timeoutMs, () => {
      const pending = this.#settle(id);
      if (!pending) return;
      this.#finish(pending, "timeout");
      const limit = `${timeoutMs / 1000}s (limits.requestTimeout)`;
      const message = `the backend did not answer ${method} within ${limit}`;
      if (method === "initialize") this.#initializeFailure = message;
      this.#reply(id, RpcErrorCode.requestTimeout, message);
      this.#send(
        {
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: id, reason: "request timed out at the gateway" },
        } as JSONRPCMessage,
      ).catch(() => {});
      // A backend that never got through initialize leaves a session nobody can use.
      if (method === "initialize") void this.close(message);
    });
  }

  #send(message: JSONRPCMessage): Promise<void> {
    return this.#options.backend.transport.send(message);
  }

  /** Forgets a pending request; returns it if it was still pending. */
  #settle(id: RequestId): PendingRequest | undefined {
    const key = idKey(id);
    const pending = this.#pending.get(key);
    if (!pending) return undefined;
    deadlines.cancel(pending.timer);
    this.#pending.delete(key);
    return pending;
  }

  #auditDetails(request: RpcRequest): PendingRequest["audit"] {
    const audit = this.#options.audit;
    if (!audit || !AUDITED_METHODS.has(request.method)) return undefined;
    const params = request.params as Record<string, unknown> | undefined;
    const target = request.method === "resources/read" ? params?.uri : params?.name;
    return {
      target: typeof target === "string" ? target.slice(0, 512) : undefined,
      arguments: audit.withArguments ? params?.arguments : undefined,
    };
  }

  /** Records an audited request's outcome. */
  #finish(pending: PendingRequest | undefined, outcome: AuditOutcome, errorCode?: number): void {
    if (!pending?.audit || !this.#options.audit) return;
    const { principal } = this;
    this.#options.audit.record({
      user: principal.id,
      ...(principal.email !== undefined && { email: principal.email }),
      ...(principal.clientId !== undefined && { client: principal.clientId }),
      server: this.server.name,
      session: this.id,
      method: pending.method,
      ...(pending.audit.target !== undefined && { target: pending.audit.target }),
      outcome,
      ...(errorCode !== undefined && { errorCode }),
      durationMs: Math.round((this.#options.now() - pending.startedAt) * 10) / 10,
      ...(pending.audit.arguments !== undefined && { arguments: pending.audit.arguments }),
    });
  }

  #reply(id: RequestId, code: number, message: string): void {
    this.#channel?.deliver(errorResponse(id, code, message), id);
  }

  #fromBackend(message: JSONRPCMessage): void {
    this.touch();
    const classified = classify(message);
    if (!classified) return;
    if (classified.kind === "response") {
      const response = classified.message;
      const pending = this.#pending.get(idKey(response.id));
      if (!pending) {
        this.#options.logger.debug("dropped a response to no pending request", {
          id: response.id,
        });
        return;
      }
      this.#settle(response.id);
      if (pending.audit) {
        const result = response.result as { isError?: unknown } | undefined;
        if (response.error) this.#finish(pending, "error", response.error.code);
        else this.#finish(pending, result?.isError === true ? "tool_error" : "ok");
      }
      if (pending.method === "initialize" && response.error) {
        this.#channel?.deliver(message, response.id);
        void this.close("the backend refused to initialize");
        return;
      }
      const ready = pending.method === "initialize" ? this.#initialized(response) : undefined;
      if (ready) void ready.then(() => this.#channel?.deliver(message, response.id));
      else this.#channel?.deliver(message, response.id);
      return;
    }
    let related: RequestId | undefined;
    if (
      classified.kind === "notification" && classified.message.method === "notifications/progress"
    ) {
      const token = classified.message.params?.progressToken;
      for (const pending of this.#pending.values()) {
        if (pending.progressToken !== undefined && pending.progressToken === token) {
          related = pending.id;
          // Progress shows the backend is working: the request's clock starts again.
          deadlines.cancel(pending.timer);
          pending.timer = this.#startTimer(pending.id, pending.method);
          break;
        }
      }
    }
    this.#channel?.deliver(message, related);
  }

  /**
   * The gateway does not offer the spec's durable tasks (they would outlive the session the
   * gateway routes them by), so a backend's `tasks` capability is not passed on.
   */
  #initialized(response: RpcResponse): void | Promise<void> {
    const result = response.result as Record<string, unknown> | undefined;
    if (!result) return;
    if (typeof result.protocolVersion === "string") {
      this.protocolVersion = result.protocolVersion;
      this.#options.backend.transport.setProtocolVersion?.(result.protocolVersion);
    }
    const capabilities = result.capabilities as Record<string, unknown> | undefined;
    if (capabilities && "tasks" in capabilities) delete capabilities.tasks;
    return this.#options.onInitialized?.(this);
  }

  #lastError?: string;

  #backendError(error: Error): void {
    // Ending the session aborts the backend's streams, and they report that here: not an error.
    if (this.#closed) return;
    if (this.#options.backend.sessionGone?.(error)) {
      this.#backendSessionGone = true;
      this.#options.logger.info("the backend ended the session", { error: error.message });
      void this.close("the backend ended the session");
      return;
    }
    // HTTP client transports report recoverable hiccups here too (a stream reconnecting);
    // only stdio errors are fatal, and the stdio backend closes itself after reporting.
    this.#options.logger.warn("backend error", { error: error.message });
    this.#lastError = error.message;
  }

  /** Ends the session: pending requests get an error, the backend is stopped. */
  async close(reason: string): Promise<void> {
    await this.#end(reason, () => this.#options.backend.close());
  }

  /**
   * Ends this replica's part of the session and leaves the backend session running, for the
   * replica that continues it.
   */
  async release(reason: string): Promise<void> {
    this.#released = true;
    await this.#end(reason, () => this.#options.backend.detach());
  }

  /** True when the session was let go (`release`) rather than ended. */
  get released(): boolean {
    return this.#released;
  }

  #released = false;

  /**
   * Why the gateway itself could not get the backend through `initialize` (unreachable, exited,
   * timed out): the client is told the backend could not start, and gets no session.
   */
  get initializeFailure(): string | undefined {
    return this.#initializeFailure;
  }

  #initializeFailure?: string;

  /** The backend said the session it held is gone (HTTP 404): the client must start anew. */
  get backendSessionGone(): boolean {
    return this.#backendSessionGone;
  }

  #backendSessionGone = false;

  /** Settles once the session has ended and its backend has stopped (a child has exited). */
  get stopped(): Promise<void> {
    return this.#stopped.promise;
  }

  readonly #stopped = Promise.withResolvers<void>();

  /** The backend's session id, when another replica could continue this session. */
  get sharedBackendSessionId(): string | undefined {
    return this.#options.backend.sharedSessionId?.();
  }

  async #end(reason: string, stopBackend: () => Promise<void>): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const why = reason;
    for (const pending of [...this.#pending.values()]) {
      this.#finish(this.#settle(pending.id), "session_ended");
      if (pending.method === "initialize") {
        this.#initializeFailure ??= `${why} before answering initialize`;
      }
      this.#reply(
        pending.id,
        RpcErrorCode.backendError,
        `${why} before answering ${pending.method}`,
      );
    }
    this.#channel?.ended(why);
    for (const listener of this.#closeListeners) listener(this);
    try {
      await stopBackend();
    } finally {
      this.#stopped.resolve();
    }
  }
}

/** Why a request could not be handed to the backend, in words that point at the cause. */
function describeSendFailure(error: unknown, method: string): string {
  const message = error instanceof Error ? error.message : String(error);
  // Said as when the process ends while a request waits, whichever the backend showed first.
  if (error instanceof BackendProcessEnded) return `${message} before answering ${method}`;
  if (error instanceof SyntaxError) return `the backend's answer is not valid JSON: ${message}`;
  // The backend was reached; its answer was refused (limits.maxMessageBytes).
  if (error instanceof AnswerTooLargeError) return message;
  return `could not reach the backend: ${message}`;
}
