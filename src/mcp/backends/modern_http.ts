/**
 * A Streamable HTTP backend that speaks MCP 2026-07-28: each request is its own POST with the
 * revision's headers taken from its body (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`,
 * spec streamable-http §Standard Request Headers) and no session id; the answer is JSON or an
 * SSE stream carrying the request's notifications and then its response. Giving a request up
 * closes its stream, which is how 2026 cancels over HTTP. Answers come through the gateway's
 * bounded fetch (bounded_answers.ts), so no message passes `limits.maxMessageBytes`.
 */
import { GatehouseError } from "../../core/errors.ts";
import { headerOf } from "../../net/http1_response.ts";
import type { SecretMask } from "../../observability/mask.ts";
import {
  classify,
  type RpcNotification,
  type RpcRequest,
  type RpcResponse,
} from "../protocol/jsonrpc.ts";
import {
  encodeHeaderValue,
  MetaKey,
  ModernHeader,
  NAME_HEADER_SOURCE,
} from "../protocol/protocol_versions.ts";
import { SseEventReader } from "./sse_answers.ts";
import {
  CallAbandoned,
  type CallOptions,
  type ModernWire,
  type WireAnswer,
} from "./modern_wire.ts";

/** The backend answered, but not with a JSON-RPC response to the request (or not at all). */
export class WireFailure extends GatehouseError<"wire_failure"> {
  constructor(message: string, readonly status?: number) {
    super("wire_failure", message);
  }
}

export interface HttpWireOptions {
  url: URL;
  /** The configured headers, placeholders filled (a fresh token comes through `fetch`). */
  headers: Record<string, string>;
  /** The gateway's bounded fetch. */
  fetch: typeof globalThis.fetch;
  /** What never appears in an error the gateway shows or logs. */
  mask: SecretMask;
}

/** Shown of an answer that is not JSON-RPC: enough to recognise it, no more. */
const EXCERPT_CHARS = 200;

export class HttpWire implements ModernWire {
  readonly kind = "http" as const;
  onnotification?: (notification: RpcNotification) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;
  readonly #inflight = new Set<AbortController>();
  #closed = false;

  constructor(private readonly options: HttpWireOptions) {}

  async call(request: RpcRequest, options: CallOptions = {}): Promise<WireAnswer> {
    if (this.#closed) throw new WireFailure("the backend connection has ended");
    const controller = new AbortController();
    const abort = () => controller.abort();
    if (options.signal?.aborted) throw new CallAbandoned();
    options.signal?.addEventListener("abort", abort, { once: true });
    this.#inflight.add(controller);
    try {
      const response = await this.options.fetch(this.options.url, {
        method: "POST",
        headers: this.#headers(request, options.headers),
        body: JSON.stringify(request),
        signal: controller.signal,
      });
      return await this.#answer(request, response);
    } catch (error) {
      if (controller.signal.aborted) throw new CallAbandoned();
      if (error instanceof WireFailure) throw error;
      throw new WireFailure(this.options.mask.mask((error as Error).message ?? String(error)));
    } finally {
      options.signal?.removeEventListener("abort", abort);
      this.#inflight.delete(controller);
    }
  }

  /** 2026 defines no notification from a client over HTTP (a cancel closes the stream). */
  notify(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    for (const controller of this.#inflight) controller.abort();
    this.#inflight.clear();
    this.onclose?.();
    return Promise.resolve();
  }

  #headers(request: RpcRequest, extra: Record<string, string> = {}): Headers {
    const headers = new Headers(this.options.headers);
    for (const [name, value] of Object.entries(extra)) headers.set(name, value);
    const params = request.params ?? {};
    const meta = params._meta as Record<string, unknown> | undefined;
    headers.set("content-type", "application/json");
    headers.set("accept", "application/json, text/event-stream");
    headers.set(ModernHeader.protocolVersion, String(meta?.[MetaKey.protocolVersion] ?? ""));
    headers.set(ModernHeader.method, request.method);
    const source = NAME_HEADER_SOURCE[request.method];
    const name = source === undefined ? undefined : params[source];
    if (typeof name === "string") headers.set(ModernHeader.name, encodeHeaderValue(name));
    return headers;
  }

  async #answer(request: RpcRequest, response: Response): Promise<WireAnswer> {
    const status = response.status;
    const type = headerOf(response, "content-type")?.split(";")[0].trim().toLowerCase();
    if (status === 401 || status === 403) {
      await response.body?.cancel().catch(() => {});
      throw new WireFailure(
        `the backend refused the gateway's credentials (HTTP ${status}); check the headers ` +
          "configured for this server",
        status,
      );
    }
    if (type === "text/event-stream" && response.body) {
      return { response: await this.#fromStream(request, response.body, status), status };
    }
    const text = await response.text();
    const parsed = parseJson(text);
    const classified = parsed === undefined ? undefined : classify(parsed);
    if (classified?.kind === "response") return { response: classified.message, status };
    throw new WireFailure(
      `the backend answered HTTP ${status} without a JSON-RPC response: ${
        JSON.stringify(this.options.mask.mask(text).slice(0, EXCERPT_CHARS))
      }`,
      status,
    );
  }

  /** Reads the stream up to the request's response, passing on every notification before it. */
  async #fromStream(
    request: RpcRequest,
    body: ReadableStream<Uint8Array>,
    status: number,
  ): Promise<RpcResponse> {
    const reader = body.getReader();
    const events = new SseEventReader();
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) {
          throw new WireFailure(`the backend ended its answer to ${request.method} early`, status);
        }
        for (const event of events.push(decoder.decode(value, { stream: true }))) {
          if (event.event !== "" && event.event !== "message") continue;
          const classified = classify(parseJson(event.data));
          if (!classified) {
            throw new WireFailure("the backend sent an event that is not JSON-RPC", status);
          }
          if (classified.kind === "notification") this.onnotification?.(classified.message);
          else if (classified.kind === "response" && classified.message.id === request.id) {
            return classified.message;
          }
          // A request on the stream breaks 2026-07-28 (no server-to-client requests): ignored.
        }
      }
    } finally {
      // The response ends the stream (the spec's SHOULD); whatever follows is not waited for.
      reader.cancel().catch(() => {});
    }
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
