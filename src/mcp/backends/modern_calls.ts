/**
 * A 2025 session's requests to a backend that speaks MCP 2026-07-28, each to its end: sent
 * on its own under a fresh id with the session's `_meta` envelope (and, over HTTP, the
 * `Mcp-Param-*` headers its tool wants), its answer given back under the client's id in 2025
 * form. An `input_required` answer is asked of the client (modern_inputs.ts) and the request
 * sent again with the answers, round after round up to a bound. A request the client cancels
 * (or the session times out) is given up at the backend too. A 2026 client's request that
 * passes as it is (passage.ts) goes once, with its own envelope, and its answer comes back
 * untranslated.
 */
import type { Clock } from "../../core/clock.ts";
import type { JSONRPCMessage } from "../../sdk.ts";
import {
  errorResponse,
  idKey,
  type RequestId,
  RpcErrorCode,
  type RpcNotification,
  type RpcRequest,
  type RpcResponse,
} from "../protocol/jsonrpc.ts";
import type { Json } from "../translate/json_shape.ts";
import { messageFor2026Backend, type SessionMeta } from "../translate/request_meta.ts";
import { responseFor2025 } from "../translate/results.ts";
import { InputRelay } from "./modern_inputs.ts";
import { CallAbandoned, type ModernWire } from "./modern_wire.ts";
import { ToolHeaderMarks } from "./param_headers.ts";
import { passesAsItIs } from "./passage.ts";

/** Rounds of `input_required` one request may go through (the SDK client's own bound). */
export const MAX_INPUT_ROUNDS = 10;
/** A `requestState`-only answer asks for a later retry: this much later. */
const STATE_ONLY_PAUSE_MS = 250;
/** Pages of `tools/list` read to learn the `x-mcp-header` marks of a tool called unlisted. */
const MAX_MARK_PAGES = 20;

export interface ModernCallsOptions {
  server: string;
  wire: ModernWire;
  clock: Clock;
  /** The session's envelope (set once initialize has been answered). */
  meta(): SessionMeta;
  nextId(): string;
  /** Sends a message to the session. */
  deliver(message: JSONRPCMessage): void;
}

interface Call {
  readonly request: RpcRequest;
  /** A 2026 client's request, sent with its own envelope and answered as the backend wrote. */
  readonly asItIs: boolean;
  params: Json;
  rounds: number;
  abort?: AbortController;
  cancelled: boolean;
  /** Sent to the client once the next answer has come (see InputRelay). */
  completions: RpcNotification[];
}

export class ModernCalls {
  readonly #calls = new Map<string, Call>();
  readonly #inputs: InputRelay;
  readonly #marks = new ToolHeaderMarks();
  #marking?: Promise<void>;

  constructor(private readonly options: ModernCallsOptions) {
    this.#inputs = new InputRelay(options.deliver);
  }

  /** Takes `request` to its end; never throws (failures are answered to the session). */
  start(request: RpcRequest): void {
    const call: Call = {
      request,
      asItIs: passesAsItIs(request),
      params: request.params ?? {},
      rounds: 0,
      cancelled: false,
      completions: [],
    };
    const key = idKey(request.id);
    this.#calls.set(key, call);
    void this.#run(call).finally(() => this.#calls.delete(key));
  }

  /** The client gave `id` up (or the session timed it out). */
  cancel(id: RequestId): void {
    const call = this.#calls.get(idKey(id));
    if (!call) return;
    call.cancelled = true;
    call.abort?.abort();
    this.#inputs.drop(call);
  }

  /** A client's response: true when it answered one of the questions asked for a call. */
  answered(response: RpcResponse): boolean {
    return this.#inputs.answered(response);
  }

  /** Gives every call up (the connection is over). */
  stop(): void {
    for (const call of this.#calls.values()) {
      call.cancelled = true;
      call.abort?.abort();
    }
    this.#inputs.dropAll();
  }

  async #run(call: Call): Promise<void> {
    for (;;) {
      const response = await this.#attempt(call);
      if (!response || call.cancelled) return;
      for (const completion of call.completions.splice(0)) {
        this.options.deliver(completion as JSONRPCMessage);
      }
      if (call.asItIs) {
        return this.options.deliver({ ...response, id: call.request.id } as JSONRPCMessage);
      }
      const result = response.result;
      if (result?.resultType !== "input_required") {
        if (call.request.method === "tools/list") this.#marks.learn(result?.tools);
        const answer = responseFor2025(call.request.method, { ...response, id: call.request.id });
        return this.options.deliver(answer as JSONRPCMessage);
      }
      if (++call.rounds > MAX_INPUT_ROUNDS) {
        return this.#fail(
          call.request.id,
          `the backend "${this.options.server}" still asked for input after ${MAX_INPUT_ROUNDS} ` +
            `rounds of ${call.request.method}; the gateway gave the request up`,
        );
      }
      const round = await this.#inputs.ask(call, call.params, result);
      if (!round || call.cancelled) return;
      const { outcome } = round;
      if (outcome.kind === "failed") {
        const failed = { jsonrpc: "2.0", id: call.request.id, error: outcome.error };
        return this.options.deliver(failed as JSONRPCMessage);
      }
      if (outcome.kind === "waiting") return this.#fail(call.request.id, "unanswered input");
      if (!("inputResponses" in outcome.params)) await this.#pause(STATE_ONLY_PAUSE_MS);
      call.params = outcome.params;
      call.completions = round.completions;
    }
  }

  /** Sends the request once, under a fresh id; undefined when it came to nothing here. */
  async #attempt(call: Call): Promise<RpcResponse | undefined> {
    const { request } = call;
    const sent = {
      jsonrpc: "2.0" as const,
      id: this.options.nextId(),
      method: request.method,
      params: call.params,
    };
    const message = call.asItIs ? sent : messageFor2026Backend(sent, this.options.meta());
    const abort = call.abort = new AbortController();
    try {
      const headers = await this.#headersFor(request.method, call.params);
      if (call.cancelled) return undefined;
      const answer = await this.options.wire.call(message, { signal: abort.signal, headers });
      return answer.response;
    } catch (error) {
      // Given up here, or the connection ended (the session says why, to every request).
      if (error instanceof CallAbandoned || call.cancelled) return undefined;
      this.#fail(
        request.id,
        `the backend "${this.options.server}" (MCP 2026-07-28) did not answer ${request.method}: ${
          (error as Error).message
        }`,
      );
      return undefined;
    }
  }

  /** `Mcp-Param-*` for a `tools/call` over HTTP (param_headers.ts). */
  async #headersFor(method: string, params: Json): Promise<Record<string, string> | undefined> {
    if (this.options.wire.kind !== "http" || method !== "tools/call") return undefined;
    const name = params.name;
    if (typeof name !== "string") return undefined;
    if (!this.#marks.knows(name) && !this.#marks.complete) {
      await (this.#marking ??= this.#learnMarks());
    }
    return this.#marks.headersFor(name, params.arguments);
  }

  /** Reads the backend's tool list once, for the marks of a tool the client called unlisted. */
  async #learnMarks(): Promise<void> {
    let cursor: unknown;
    for (let page = 0; page < MAX_MARK_PAGES; page++) {
      const request = messageFor2026Backend(
        {
          jsonrpc: "2.0" as const,
          id: this.options.nextId(),
          method: "tools/list",
          params: typeof cursor === "string" ? { cursor } : {},
        },
        this.options.meta(),
      );
      const result = await this.options.wire.call(request).then(
        ({ response }) => response.result,
        () => undefined,
      );
      this.#marks.learn(result?.tools);
      cursor = result?.nextCursor;
      if (typeof cursor !== "string") break;
    }
    this.#marks.complete = true;
  }

  #pause(ms: number): Promise<void> {
    return new Promise((resolve) => this.options.clock.setTimeout(resolve, ms));
  }

  #fail(id: RequestId, message: string): void {
    this.options.deliver(errorResponse(id, RpcErrorCode.backendError, message));
  }
}
