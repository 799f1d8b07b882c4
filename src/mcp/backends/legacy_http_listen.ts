/**
 * The GET streams of a 2025 Streamable HTTP backend session (legacy_http.ts): the standalone
 * one, opened once the session is initialized, that carries what the server sends unasked;
 * and the ones that take up a POST's answer where it broke off (the server may close it on
 * purpose, SEP-1699). Each is reopened when it ends, with `Last-Event-ID` so the server can
 * send what was missed, as the SDK's transport did: after the server's `retry` time, or a
 * backoff from 1 s growing by half each time up to 30 s; two failed openings in a row and it
 * stops. A server without such a stream answers 405, which is no error. A stream that takes up
 * a POST's answer ends once every response it was awaited for has come.
 */
import type { Clock, Timer } from "../../core/clock.ts";
import type { RequestId } from "../protocol/jsonrpc.ts";
import { SseEventReader } from "./sse_answers.ts";

/** The requests an answer still owes responses to, by `idKey`. */
export type Awaiting = Map<string, RequestId>;

export interface Reconnection {
  initialDelayMs: number;
  maxDelayMs: number;
  growFactor: number;
  /** Failed openings in a row before giving up. */
  maxRetries: number;
}

/** The SDK's defaults. */
export const RECONNECTION: Reconnection = {
  initialDelayMs: 1_000,
  maxDelayMs: 30_000,
  growFactor: 1.5,
  maxRetries: 2,
};

export interface ListenOptions {
  clock: Clock;
  reconnection?: Partial<Reconnection>;
  /** Opens a GET stream (after `lastEventId`); undefined when the server offers none (405). */
  open(lastEventId: string | undefined): Promise<Response | undefined>;
  /** Reads a stream to its end, crossing awaited responses off. */
  read(response: Response, events: SseEventReader, awaiting?: Awaiting): Promise<void>;
  /** Tells the requests still awaited that no answer will come. */
  fail(awaiting: Awaiting, why: string): void;
  report(error: Error): void;
  closed(): boolean;
}

export class Listener {
  readonly #options: ListenOptions;
  readonly #reconnection: Reconnection;
  readonly #timers = new Set<Timer>();
  /** The wait the server asked for between reconnections (an SSE `retry` field). */
  #retryMs?: number;

  constructor(options: ListenOptions) {
    this.#options = options;
    this.#reconnection = { ...RECONNECTION, ...options.reconnection };
  }

  /** Opens the standalone stream; a refusal is reported (a 404: the session is gone). */
  listen(): void {
    this.#open(undefined, undefined).catch(() => {/* reported */});
  }

  /** Takes up a POST's answer after `lastEventId`, once the reconnection wait has passed. */
  resume(lastEventId: string, awaiting: Awaiting, retryMs?: number): void {
    this.noteRetry(retryMs);
    this.#schedule(lastEventId, awaiting, 0);
  }

  noteRetry(retryMs: number | undefined): void {
    if (retryMs !== undefined) this.#retryMs = retryMs;
  }

  stop(): void {
    for (const timer of this.#timers) timer.clear();
    this.#timers.clear();
  }

  async #open(lastEventId: string | undefined, awaiting: Awaiting | undefined): Promise<void> {
    let response: Response | undefined;
    try {
      response = await this.#options.open(lastEventId);
    } catch (error) {
      this.#options.report(error as Error);
      throw error;
    }
    if (!response) {
      if (awaiting) {
        this.#options.fail(
          awaiting,
          "the backend broke off its answer and offers no stream to resume it on (HTTP 405)",
        );
      }
      return;
    }
    const events = new SseEventReader();
    this.#options.read(response, events, awaiting).then(
      () => this.#ended(events, lastEventId, awaiting),
      (error) => {
        this.#options.report(new Error(`SSE stream disconnected: ${error}`));
        this.#ended(events, lastEventId, awaiting);
      },
    );
  }

  #ended(events: SseEventReader, previous: string | undefined, awaiting?: Awaiting): void {
    this.noteRetry(events.retry);
    if (awaiting?.size === 0) return;
    this.#schedule(events.lastEventId || previous, awaiting, 0);
  }

  #schedule(lastEventId: string | undefined, awaiting: Awaiting | undefined, attempt: number) {
    if (this.#options.closed()) return;
    const { initialDelayMs, maxDelayMs, growFactor, maxRetries } = this.#reconnection;
    if (attempt >= maxRetries) {
      this.#options.report(new Error(`Maximum reconnection attempts (${maxRetries}) exceeded.`));
      if (awaiting) {
        this.#options.fail(
          awaiting,
          `the backend broke off its answer and could not be reached to resume it (${maxRetries} attempts)`,
        );
      }
      return;
    }
    const delay = Math.min(this.#retryMs ?? initialDelayMs * growFactor ** attempt, maxDelayMs);
    const timer = this.#options.clock.setTimeout(() => {
      this.#timers.delete(timer);
      if (this.#options.closed()) return;
      this.#open(lastEventId, awaiting).catch((error) => {
        this.#options.report(new Error(`Failed to reconnect SSE stream: ${error.message}`));
        this.#schedule(lastEventId, awaiting, attempt + 1);
      });
    }, delay);
    this.#timers.add(timer);
  }
}
