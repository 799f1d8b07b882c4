/**
 * A backend that speaks only MCP 2026-07-28, as the session sees it: a 2025-11-25 backend.
 * The client's session stays at the gateway; `initialize` is answered from the backend's
 * `server/discover`, and every later request goes to the backend on its own, under an id of
 * the gateway's, with the `_meta` envelope the session's `initialize` (and `logging/setLevel`)
 * settled (modern_calls.ts takes each to its end, `input_required` rounds included). What
 * 2026 removed is answered here (`ping`, `logging/setLevel`) or mapped (`resources/subscribe`
 * onto a `subscriptions/listen`: modern_listen.ts).
 */
import type { Clock } from "../../core/clock.ts";
import type { Logger } from "../../observability/logger.ts";
import type { JSONRPCMessage, Transport } from "../../sdk.ts";
import {
  classify,
  errorResponse,
  type RequestId,
  RpcErrorCode,
  type RpcNotification,
  type RpcRequest,
} from "../protocol/jsonrpc.ts";
import { initializeFromDiscover } from "../translate/discover.ts";
import { isObject, type Json } from "../translate/json_shape.ts";
import {
  type SessionMeta,
  sessionMetaFromInitialize,
  withLogLevel,
} from "../translate/request_meta.ts";
import { ModernCalls } from "./modern_calls.ts";
import { passesAsItIs } from "./passage.ts";
import { ListenKeeper } from "./modern_listen.ts";
import type { ModernWire } from "./modern_wire.ts";
import { probeRevision, type Verdict } from "./revision_probe.ts";

export interface ModernBackendOptions {
  /** The server's name, for the words of errors. */
  server: string;
  wire: ModernWire;
  clock: Clock;
  logger: Logger;
  /** The backend's discover answer, when the revision probe has already asked. */
  discovered?: Extract<Verdict, { revision: "2026-07-28" }>;
  /** How long `server/discover` (and a listen's acknowledgement) may take. */
  timeoutMs: number;
}

export class ModernBackend implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;
  #meta?: SessionMeta;
  #capabilities: Json = {};
  readonly #calls: ModernCalls;
  readonly #listen: ListenKeeper;
  #next = 0;
  #closed = false;

  constructor(private readonly options: ModernBackendOptions) {
    const { wire } = options;
    wire.onnotification = (notification) => {
      if (!this.#listen.notification(notification)) this.#deliver(notification as JSONRPCMessage);
    };
    wire.onerror = (error) => this.onerror?.(error);
    wire.onclose = () => this.#ended();
    const deliver = (message: JSONRPCMessage | RpcNotification) =>
      this.#deliver(message as JSONRPCMessage);
    this.#calls = new ModernCalls({
      server: options.server,
      wire,
      clock: options.clock,
      meta: () => this.#meta!,
      nextId: () => this.#id(),
      deliver,
    });
    this.#listen = new ListenKeeper({
      wire,
      clock: options.clock,
      logger: options.logger,
      meta: () => this.#meta,
      capabilities: () => this.#capabilities,
      nextId: () => this.#id(),
      deliver,
      ackTimeoutMs: options.timeoutMs,
    });
  }

  /** The connection is started by whoever made the wire. */
  start(): Promise<void> {
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("the backend connection has ended"));
    const classified = classify(message);
    if (classified?.kind === "request") this.#request(classified.message);
    else if (classified?.kind === "notification") this.#clientNotification(classified.message);
    else if (classified?.kind === "response" && !this.#calls.answered(classified.message)) {
      this.options.logger.debug("dropped a client answer to no question", {
        id: classified.message.id,
      });
    }
    return Promise.resolve();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#stop();
    await this.options.wire.close();
    this.onclose?.();
  }

  #request(request: RpcRequest): void {
    if (passesAsItIs(request)) return this.#calls.start(request);
    switch (request.method) {
      case "initialize":
        return void this.#initialize(request);
      case "ping":
        return this.#reply(request.id, {});
      case "logging/setLevel": {
        const next = this.#meta && withLogLevel(this.#meta, request.params);
        if (!next) return this.#fail(request.id, RpcErrorCode.invalidParams, "unknown log level");
        this.#meta = next;
        return this.#reply(request.id, {});
      }
      case "resources/subscribe":
      case "resources/unsubscribe":
        return void this.#subscription(request);
    }
    if (!this.#meta) {
      return this.#fail(request.id, RpcErrorCode.invalidRequest, "send initialize first");
    }
    this.#calls.start(request);
  }

  #clientNotification(notification: RpcNotification): void {
    if (notification.method === "notifications/initialized") return this.#listen.start();
    // Nothing else a 2025 client says has a 2026 counterpart (roots changes, progress).
    if (notification.method !== "notifications/cancelled") return;
    const requestId = notification.params?.requestId as RequestId | undefined;
    if (requestId !== undefined) this.#calls.cancel(requestId);
  }

  async #initialize(request: RpcRequest): Promise<void> {
    const { server, wire, clock, timeoutMs } = this.options;
    const verdict = this.options.discovered ??
      await probeRevision(wire, request.params, { id: this.#id(), timeoutMs, clock });
    if (this.#closed) return;
    if (verdict.revision !== "2026-07-28") {
      return this.#fail(
        request.id,
        RpcErrorCode.backendError,
        `the backend "${server}" does not speak MCP 2026-07-28 (${verdict.why}), yet its ` +
          "configuration says protocol: 2026-07-28; set protocol: auto (or 2025-11-25) for it",
      );
    }
    this.#meta = sessionMetaFromInitialize(request.params, verdict.version);
    this.#capabilities = isObject(verdict.discover.capabilities)
      ? verdict.discover.capabilities
      : {};
    const fallbackInfo = { name: server, version: "unknown" };
    this.#reply(
      request.id,
      initializeFromDiscover(verdict.discover, request.params?.protocolVersion, fallbackInfo),
    );
  }

  async #subscription(request: RpcRequest): Promise<void> {
    const uri = request.params?.uri;
    if (typeof uri !== "string") {
      return this.#fail(request.id, RpcErrorCode.invalidParams, "params.uri must be a string");
    }
    const resources = this.#capabilities.resources;
    if (!isObject(resources) || resources.subscribe !== true) {
      return this.#fail(
        request.id,
        RpcErrorCode.methodNotFound,
        `the backend "${this.options.server}" offers no resource subscriptions`,
      );
    }
    if (request.method === "resources/unsubscribe") {
      await this.#listen.unsubscribe(uri);
      return this.#reply(request.id, {});
    }
    const why = await this.#listen.subscribe(uri);
    if (why === undefined) return this.#reply(request.id, {});
    this.#fail(request.id, RpcErrorCode.backendError, why);
  }

  #id(): string {
    return `gatehouse-${++this.#next}`;
  }

  #reply(id: RequestId, result: Json): void {
    this.#deliver({ jsonrpc: "2.0", id, result } as JSONRPCMessage);
  }

  #fail(id: RequestId, code: number, message: string): void {
    this.#deliver(errorResponse(id, code, message));
  }

  #deliver(message: JSONRPCMessage): void {
    if (!this.#closed) this.onmessage?.(message);
  }

  /** The backend's end went away (a stdio child exited). */
  #ended(): void {
    if (this.#closed) return;
    this.#stop();
    this.onclose?.();
  }

  #stop(): void {
    this.#closed = true;
    this.#listen.close();
    this.#calls.stop();
  }
}
