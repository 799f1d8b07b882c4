/**
 * Calls of 2026 clients waiting for their client's input: the backend asked (elicitation,
 * sampling, roots), the client was answered `input_required`, and the backend request stays
 * open until the client's retry brings the answers. Kept in this process's memory under a
 * random reference, which the sealed `requestState` carries; a retry that reaches another
 * replica, or comes after `ttlMs`, finds nothing and is told to start again.
 *
 * Generic over the link a call runs on, so this file need not know `StatelessLink` (which
 * holds a `WaitingInputs`): the two files would otherwise import each other.
 */
import type { Clock, Timer } from "../../core/clock.ts";
import { randomHex } from "../../crypto/random.ts";
import { RpcErrorCode, type RpcResponse } from "../protocol/jsonrpc.ts";
import type { LinkCall } from "./link_calls.ts";
import type { AskedInput } from "../translate/input_requests.ts";

export interface WaitingInput<Link> {
  /** The link the call runs on (it holds that link's input slot until answered). */
  link: Link;
  call: LinkCall;
  /** What the client was asked, and which backend request each key answers. */
  asked: AskedInput[];
}

export class WaitingInputs<Link> {
  readonly #waiting = new Map<string, { input: WaitingInput<Link>; timer: Timer }>();

  constructor(private readonly clock: Clock, readonly ttlMs: number) {}

  /**
   * Keeps `input` until its retry takes it, or `ttlMs` passes; returns its reference (`ref`
   * when given: a call put back after a retry that could not be used).
   */
  hold(input: WaitingInput<Link>, ref = randomHex(16)): string {
    const timer = this.clock.setTimeout(() => {
      this.#waiting.delete(ref);
      void this.#abandon(input);
    }, this.ttlMs);
    this.#waiting.set(ref, { input, timer });
    return ref;
  }

  /** The waiting call for `ref`, removed (a retry takes it once). */
  take(ref: string): WaitingInput<Link> | undefined {
    const held = this.#waiting.get(ref);
    if (!held) return undefined;
    this.#waiting.delete(ref);
    held.timer.clear();
    return held.input;
  }

  get size(): number {
    return this.#waiting.size;
  }

  /** The client never came back: the backend's requests are declined and its call cancelled. */
  async #abandon(input: WaitingInput<Link>): Promise<void> {
    const declined: RpcResponse[] = input.asked.map((entry) => ({
      jsonrpc: "2.0",
      id: entry.backendId,
      error: { code: RpcErrorCode.internalError, message: "the client did not answer in time" },
    }));
    await input.call.answer(declined).catch(() => {});
    await input.call.cancel("the client did not answer in time").catch(() => {});
  }
}
