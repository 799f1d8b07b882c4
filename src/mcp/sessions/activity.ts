/**
 * How busy a session is, for idle reaping and for choosing which session makes room at a
 * limit: when it was last active, in which order sessions were used, and how many client
 * streams it holds open.
 */
import type { Clock } from "../../core/clock.ts";

export class Activity {
  /** One sequence for every session of the process, so recency orders them all. */
  static #sequence = 0;
  #last: number;
  #recency: number;
  #openStreams = 0;
  /** When the session began (epoch ms on the injected clock). */
  readonly openedAt: number;

  constructor(private readonly clock: Clock) {
    this.#last = this.openedAt = clock.now();
    this.#recency = ++Activity.#sequence;
  }

  /** When the session was last active (epoch ms on the injected clock). */
  get last(): number {
    return this.#last;
  }

  /**
   * Which session was active last, as a sequence: two sessions active in the same millisecond
   * still have an order (the least recently used one makes room at the limit).
   */
  get recency(): number {
    return this.#recency;
  }

  /** Open client streams; a session holding one is not idle. */
  get openStreams(): number {
    return this.#openStreams;
  }

  /** Marks the session active now (a message, or the end of one of its streams). */
  touch(): void {
    this.#last = this.clock.now();
    this.#recency = ++Activity.#sequence;
  }

  /** Counts a client stream as open until `closed` settles; resolves as `closed` does. */
  holdStream<T>(closed: Promise<T>): Promise<T> {
    this.#openStreams++;
    return closed.finally(() => this.#openStreams--);
  }
}
