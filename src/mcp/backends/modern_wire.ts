/**
 * How the gateway talks to a backend that speaks MCP 2026-07-28: one request at a time, each
 * answered by its own response, with the notifications that belong to it (progress, logs,
 * a listen's updates) handed on as they come. `PipeWire` is the stdio kind: every message on
 * one newline-delimited pipe, answers matched by id, a request given up on told with
 * `notifications/cancelled` (stdio.mdx). The HTTP kind, one POST per request, is
 * modern_http.ts.
 */
import { GatehouseError } from "../../core/errors.ts";
import type { JSONRPCMessage, Transport } from "../../sdk.ts";
import {
  classify,
  errorResponse,
  idKey,
  RpcErrorCode,
  type RpcNotification,
  type RpcRequest,
  type RpcResponse,
} from "../protocol/jsonrpc.ts";
import { MetaKey } from "../protocol/protocol_versions.ts";

/** What a cancellation carries of its request's envelope (a log level has nothing to say). */
const CANCEL_META_KEYS = [MetaKey.protocolVersion, MetaKey.clientCapabilities, MetaKey.clientInfo];

/** A backend's answer to one request; `status` is the HTTP status when there was one. */
export interface WireAnswer {
  response: RpcResponse;
  status?: number;
}

export interface CallOptions {
  /** Aborting gives the request up: the backend is told the way its transport says. */
  signal?: AbortSignal;
  /** Headers for this request where the wire has headers (`Mcp-Param-*`). */
  headers?: Record<string, string>;
}

export interface ModernWire {
  /** `stdio` or `http`: what an unanswered or unreachable backend means differs (§9.1). */
  readonly kind: "stdio" | "http";
  /**
   * Sends `request` (its `_meta` envelope already in place) and resolves with its response;
   * rejects when there is none (the connection failed or ended, or `signal` aborted it).
   */
  call(request: RpcRequest, options?: CallOptions): Promise<WireAnswer>;
  /** Sends a notification; dropped where the transport carries none from a client (HTTP). */
  notify(notification: RpcNotification): Promise<void>;
  /** Every notification the backend sends (a request's progress and logs, listen updates). */
  onnotification?: (notification: RpcNotification) => void;
  /** Fatal failures, as transports report them (the connection ends after). */
  onerror?: (error: Error) => void;
  onclose?: () => void;
  close(): Promise<void>;
}

/** Why a call was given up, as the rejection of `call` says it. */
export class CallAbandoned extends GatehouseError<"call_abandoned"> {
  constructor() {
    super("call_abandoned", "the request was given up");
  }
}

/** The cancellation of `request` as the backend must get it: its own envelope, its id. */
export function cancellationOf(request: RpcRequest, reason: string): RpcNotification {
  const meta = request.params?._meta as Record<string, unknown> | undefined;
  const envelope = Object.fromEntries(
    CANCEL_META_KEYS.filter((key) => meta?.[key] !== undefined).map((key) => [key, meta![key]]),
  );
  return {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: request.id, reason, _meta: envelope },
  };
}

interface Waiting {
  resolve(answer: WireAnswer): void;
  reject(error: Error): void;
}

/** A 2026 backend on a message pipe (a stdio child). The pipe must be started already. */
export class PipeWire implements ModernWire {
  readonly kind = "stdio" as const;
  onnotification?: (notification: RpcNotification) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;
  readonly #waiting = new Map<string, Waiting>();
  #lastError?: Error;
  #closed = false;

  constructor(private readonly pipe: Transport) {
    pipe.onmessage = (message) => this.#message(message);
    pipe.onerror = (error) => {
      this.#lastError = error;
      this.onerror?.(error);
    };
    pipe.onclose = () => this.#ended();
  }

  call(request: RpcRequest, options: CallOptions = {}): Promise<WireAnswer> {
    if (this.#closed) {
      return Promise.reject(this.#lastError ?? new Error("the backend connection has ended"));
    }
    const key = idKey(request.id);
    const { promise, resolve, reject } = Promise.withResolvers<WireAnswer>();
    const signal = options.signal;
    const onAbort = () => {
      if (this.#waiting.get(key) !== waiting) return;
      this.#waiting.delete(key);
      this.pipe.send(
        cancellationOf(request, "the gateway gave the request up") as JSONRPCMessage,
      ).catch(() => {});
      reject(new CallAbandoned());
    };
    const waiting: Waiting = {
      resolve: (answer) => {
        signal?.removeEventListener("abort", onAbort);
        resolve(answer);
      },
      reject: (error) => {
        signal?.removeEventListener("abort", onAbort);
        reject(error);
      },
    };
    this.#waiting.set(key, waiting);
    if (signal?.aborted) {
      onAbort();
      return promise;
    }
    signal?.addEventListener("abort", onAbort, { once: true });
    this.pipe.send(request as JSONRPCMessage).catch((error) => {
      if (this.#waiting.get(key) !== waiting) return;
      this.#waiting.delete(key);
      waiting.reject(error);
    });
    return promise;
  }

  notify(notification: RpcNotification): Promise<void> {
    return this.pipe.send(notification as JSONRPCMessage);
  }

  async close(): Promise<void> {
    await this.pipe.close();
    this.#ended();
  }

  #message(message: JSONRPCMessage): void {
    const classified = classify(message);
    if (!classified) return;
    if (classified.kind === "response") {
      const key = idKey(classified.message.id);
      const waiting = this.#waiting.get(key);
      this.#waiting.delete(key);
      waiting?.resolve({ response: classified.message });
    } else if (classified.kind === "notification") {
      this.onnotification?.(classified.message);
    } else {
      // A 2026 server sends no requests (stdio.mdx); one that does is told so, not left hanging.
      this.pipe.send(errorResponse(
        classified.message.id,
        RpcErrorCode.methodNotFound,
        "MCP 2026-07-28 has no server-to-client requests: ask in an input_required result",
      )).catch(() => {});
    }
  }

  #ended(): void {
    if (this.#closed) return;
    this.#closed = true;
    const error = this.#lastError ?? new Error("the backend closed the connection");
    for (const waiting of this.#waiting.values()) waiting.reject(error);
    this.#waiting.clear();
    this.onclose?.();
  }
}
