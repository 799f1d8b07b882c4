/**
 * One member of an aggregate, seen from the aggregate: a backend connection with its own
 * initialize handshake, its own request ids (so two members' ids never meet), and a state that
 * says whether it can be used now. A member that fails is "down" until it is tried again.
 */
import { GatehouseError } from "../../core/errors.ts";
import type { Clock } from "../../core/clock.ts";
import type { Deadline, Deadlines } from "../../core/deadlines.ts";
import type { Logger } from "../../observability/logger.ts";
import type { JSONRPCMessage } from "../../sdk.ts";
import { CredentialRequiredError } from "../../core/credential_required.ts";
import type { Backend } from "../backends/connect.ts";
import { classify, type RequestId } from "../protocol/jsonrpc.ts";

export type MemberState = "idle" | "connecting" | "ready" | "down";

/**
 * A JSON-RPC error answered by a member (or made up for it), relayed as it is: `rpcCode` is the
 * JSON-RPC error code the client gets.
 */
export class MemberError extends GatehouseError<"member_error"> {
  constructor(
    readonly rpcCode: number,
    message: string,
    readonly data?: unknown,
    /** The member a URL elicitation in `data` is for, so its completion can be announced. */
    readonly elicitingFor?: string,
  ) {
    super("member_error", message);
  }
}

export interface MemberInit {
  protocolVersion: string;
  capabilities: Record<string, unknown>;
  clientInfo: Record<string, unknown>;
}

export interface MemberInfo {
  protocolVersion?: string;
  capabilities: Record<string, unknown>;
  serverInfo?: Record<string, unknown>;
  instructions?: string;
}

export interface MemberHandlers {
  /** A notification from the member (progress, logging, list_changed, …). */
  notification(member: MemberLink, message: JSONRPCMessage): void;
  /** A server-to-client request (sampling, elicitation, roots, ping). */
  request(member: MemberLink, id: RequestId, method: string, params: unknown): void;
  /** The member's connection ended. */
  down(member: MemberLink, reason: string): void;
}

interface Waiting {
  resolve(result: Record<string, unknown>): void;
  reject(error: MemberError): void;
  timer?: Deadline;
}

export class MemberLink {
  state: MemberState = "idle";
  info?: MemberInfo;
  downReason?: string;
  /** Set when the member is down because the person has no usable credential for it. */
  credentialError?: CredentialRequiredError;
  downAt = 0;
  #backend?: Backend;
  #nextId = 1;
  #waiting = new Map<number, Waiting>();
  #connecting?: Promise<void>;

  constructor(
    readonly name: string,
    private readonly options: {
      connect(): Backend | Promise<Backend>;
      /** When the member went down is read on this clock, against the aggregate's back-off. */
      clock: Clock;
      /** Request timeouts, on the gateway's one deadline timer. */
      deadlines: Deadlines;
      handlers: MemberHandlers;
      logger: Logger;
    },
  ) {}

  /** Starts the backend and initializes it; idempotent while a connection is under way. */
  connect(init: MemberInit, timeoutMs: number): Promise<void> {
    if (this.state === "ready") return Promise.resolve();
    this.#connecting ??= this.#connect(init, timeoutMs).finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  async #connect(init: MemberInit, timeoutMs: number): Promise<void> {
    this.state = "connecting";
    let backend: Backend;
    try {
      backend = await this.options.connect();
    } catch (error) {
      this.credentialError = error instanceof CredentialRequiredError ? error : undefined;
      this.#markDown((error as Error).message);
      throw error;
    }
    this.credentialError = undefined;
    this.#backend = backend;
    backend.transport.onmessage = (message) => this.#receive(message);
    backend.transport.onerror = (error) => {
      this.options.logger.warn("aggregate member error", {
        member: this.name,
        error: error.message,
      });
      this.downReason = error.message;
    };
    backend.transport.onclose = () => {
      if (this.#backend === backend) this.#markDown(this.downReason ?? "its connection closed");
    };
    try {
      await backend.transport.start();
      const result = await this.request("initialize", init, timeoutMs);
      this.info = {
        protocolVersion: result.protocolVersion as string | undefined,
        capabilities: (result.capabilities as Record<string, unknown>) ?? {},
        serverInfo: result.serverInfo as Record<string, unknown> | undefined,
        instructions: result.instructions as string | undefined,
      };
      if (this.info.protocolVersion) {
        backend.transport.setProtocolVersion?.(this.info.protocolVersion);
      }
      await backend.transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
      this.state = "ready";
      this.downReason = undefined;
    } catch (error) {
      this.#markDown((error as Error).message);
      await backend.close();
      throw error;
    }
  }

  /** Sends a request; resolves with the member's result or rejects with its error. */
  request(
    method: string,
    params: unknown,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>> {
    return this.start(method, params, timeoutMs).result;
  }

  /** Like `request`, also returning the id used, so the request can be cancelled. */
  start(
    method: string,
    params: unknown,
    timeoutMs?: number,
  ): { id: number; result: Promise<Record<string, unknown>> } {
    const id = this.#nextId++;
    const result = new Promise<Record<string, unknown>>((resolve, reject) => {
      const backend = this.#backend;
      if (!backend || this.state === "down" || this.state === "idle") {
        return reject(new MemberError(-32603, this.#unavailable()));
      }
      const waiting: Waiting = { resolve, reject };
      if (timeoutMs !== undefined) {
        waiting.timer = this.options.deadlines.add(timeoutMs, () => {
          this.#waiting.delete(id);
          reject(
            new MemberError(
              -32001,
              `${this.name} did not answer ${method} within ${timeoutMs / 1000}s`,
            ),
          );
          this.notify("notifications/cancelled", { requestId: id, reason: "timed out" });
        });
      }
      this.#waiting.set(id, waiting);
      const message = { jsonrpc: "2.0", id, method, ...(params !== undefined && { params }) };
      backend.transport.send(message as JSONRPCMessage).catch((error) => {
        if (this.#settle(id)) reject(new MemberError(-32603, `${this.name}: ${error.message}`));
      });
    });
    return { id, result };
  }

  notify(method: string, params?: unknown): void {
    if (this.state !== "ready" || !this.#backend) return;
    const message = { jsonrpc: "2.0", method, ...(params !== undefined && { params }) };
    this.#backend.transport.send(message as JSONRPCMessage).catch(() => {});
  }

  /** Answers a request the member sent (the client's answer, relayed). */
  respond(id: RequestId, answer: { result: unknown } | { error: unknown }): void {
    this.#backend?.transport.send({ jsonrpc: "2.0", id, ...answer } as JSONRPCMessage)
      .catch(() => {});
  }

  /** Stops waiting for a request: its caller gets an error now. */
  cancel(id: number, reason: string): void {
    const waiting = this.#waiting.get(id);
    if (!waiting || !this.#settle(id)) return;
    waiting.reject(new MemberError(-32800, reason));
  }

  #settle(id: number): boolean {
    const waiting = this.#waiting.get(id);
    if (!waiting) return false;
    this.options.deadlines.cancel(waiting.timer);
    this.#waiting.delete(id);
    return true;
  }

  #receive(message: JSONRPCMessage): void {
    const classified = classify(message);
    if (!classified) return;
    if (classified.kind === "response") {
      const id = classified.message.id;
      const waiting = typeof id === "number" ? this.#waiting.get(id) : undefined;
      if (!waiting || !this.#settle(id as number)) return;
      const error = classified.message.error;
      if (error) {
        waiting.reject(new MemberError(error.code, error.message, error.data));
      } else waiting.resolve((classified.message.result ?? {}) as Record<string, unknown>);
      return;
    }
    if (classified.kind === "request") {
      const { id, method, params } = classified.message;
      this.options.handlers.request(this, id, method, params);
      return;
    }
    this.options.handlers.notification(this, message);
  }

  /** Lets the next use try the member again at once, whatever its back-off says. */
  retryNow(): void {
    this.downAt = 0;
  }

  #unavailable(): string {
    return this.downReason
      ? `the member "${this.name}" is unavailable: ${this.downReason}`
      : `the member "${this.name}" is not connected`;
  }

  #markDown(reason: string): void {
    if (this.state === "down") return;
    this.state = "down";
    this.downReason = reason;
    this.downAt = this.options.clock.now();
    for (const [id, waiting] of [...this.#waiting]) {
      this.#settle(id);
      waiting.reject(new MemberError(-32603, `the member "${this.name}" stopped: ${reason}`));
    }
    this.options.handlers.down(this, reason);
  }

  async close(): Promise<void> {
    const backend = this.#backend;
    this.#backend = undefined;
    this.state = "down";
    this.downReason ??= "the session ended";
    for (const [id, waiting] of [...this.#waiting]) {
      this.#settle(id);
      waiting.reject(new MemberError(-32603, "the session ended"));
    }
    await backend?.close();
  }
}
