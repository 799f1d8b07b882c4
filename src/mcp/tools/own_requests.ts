/**
 * Requests a session sends its backend on its own behalf, not its client's (tool integrity
 * lists the tools before judging a call when the client never listed them). Their ids carry a
 * random part no client chooses, their answers are taken here before the session looks for a
 * client request, and each waits at most the session's request timeout.
 */
import type { Clock } from "../../core/clock.ts";
import { randomHex } from "../../crypto/random.ts";
import type { JSONRPCMessage } from "../../sdk.ts";
import { idKey, type RpcResponse } from "../protocol/jsonrpc.ts";

interface Waiting {
  resolve(response: RpcResponse): void;
  reject(error: Error): void;
  clear(): void;
}

export class OwnRequests {
  readonly #prefix = `gatehouse-${randomHex(8)}-`;
  #next = 0;
  readonly #waiting = new Map<string, Waiting>();

  constructor(private readonly clock: Clock, private readonly timeoutMs: number) {}

  /** Sends `method` through `send` and resolves with the backend's answer. */
  ask(
    send: (message: JSONRPCMessage) => Promise<void>,
    method: string,
    params: Record<string, unknown>,
  ): Promise<RpcResponse> {
    const id = `${this.#prefix}${++this.#next}`;
    const { promise, resolve, reject } = Promise.withResolvers<RpcResponse>();
    const timer = this.clock.setTimeout(
      () => this.#end(id, new Error(`the backend did not answer ${method} in time`)),
      this.timeoutMs,
    );
    this.#waiting.set(idKey(id), { resolve, reject, clear: () => timer.clear() });
    send({ jsonrpc: "2.0", id, method, params } as JSONRPCMessage).catch((error) =>
      this.#end(id, error instanceof Error ? error : new Error(String(error)))
    );
    return promise;
  }

  /** Takes `response` when it answers one of these requests. */
  answered(response: RpcResponse): boolean {
    const waiting = this.#waiting.get(idKey(response.id));
    if (!waiting) return false;
    this.#waiting.delete(idKey(response.id));
    waiting.clear();
    waiting.resolve(response);
    return true;
  }

  /** The session ended: every request still waiting fails. */
  endAll(reason: string): void {
    for (const key of [...this.#waiting.keys()]) this.#fail(key, new Error(reason));
  }

  #end(id: string, error: Error): void {
    this.#fail(idKey(id), error);
  }

  #fail(key: string, error: Error): void {
    const waiting = this.#waiting.get(key);
    if (!waiting) return;
    this.#waiting.delete(key);
    waiting.clear();
    waiting.reject(error);
  }
}
