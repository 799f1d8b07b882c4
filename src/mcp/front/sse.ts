/**
 * A server-sent-events response body. Writes after the client has gone are dropped, keep-alive
 * comments stop idle connections from being cut by proxies, and `closed` resolves with why the
 * stream ended once it has, from either side.
 *
 * A client that reads more slowly than its backend writes would otherwise make the gateway hold
 * everything in between. Chunks are handed over only as the client reads; once more than
 * `maxBufferedBytes` wait, what waits is dropped and the stream ends (`"overflow"`). A
 * Streamable HTTP client resumes from its last event id; the log it resumes from is bounded too.
 */
import type { Clock, Timer } from "../../core/clock.ts";

export const KEEPALIVE_MS = 25_000;
const encoder = new TextEncoder();

export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
  retryMs?: number;
}

/** Why a stream ended: the gateway closed it, the client went away, or it read too slowly. */
export type SseEndReason = "closed" | "client_gone" | "overflow";

export function formatEvent({ id, event, data, retryMs }: SseEvent): string {
  let text = "";
  if (id !== undefined) text += `id: ${id}\n`;
  if (event !== undefined) text += `event: ${event}\n`;
  if (retryMs !== undefined) text += `retry: ${retryMs}\n`;
  // JSON.stringify output has no raw newlines; split anyway so any data stays one event.
  for (const line of data.split("\n")) text += `data: ${line}\n`;
  return text + "\n";
}

/**
 * The keep-alives of every open stream on one clock, from one timer: a timer per stream was
 * about 0.7 KiB of each idle stream's memory. A stream's first keep-alive comes within
 * `KEEPALIVE_MS` of its opening, and one every `KEEPALIVE_MS` after that.
 */
class KeepAlives {
  readonly #writers = new Set<SseWriter>();
  #timer?: Timer;

  constructor(private readonly clock: Clock) {}

  add(writer: SseWriter): void {
    this.#writers.add(writer);
    this.#timer ??= this.clock.setInterval(
      () => {
        for (const each of this.#writers) each.keepAlive();
      },
      KEEPALIVE_MS,
      { unref: true },
    );
  }

  delete(writer: SseWriter): void {
    this.#writers.delete(writer);
    if (this.#writers.size > 0) return;
    this.#timer?.clear();
    this.#timer = undefined;
  }
}

const keepAlivesByClock = new WeakMap<Clock, KeepAlives>();

function keepAlivesOf(clock: Clock): KeepAlives {
  let keepAlives = keepAlivesByClock.get(clock);
  if (!keepAlives) keepAlivesByClock.set(clock, keepAlives = new KeepAlives(clock));
  return keepAlives;
}

export class SseWriter {
  readonly body: ReadableStream<Uint8Array>;
  readonly closed: Promise<SseEndReason>;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  /**
   * Chunks the client has not asked for yet. The gateway keeps its own queue, not the stream's,
   * so that it can drop it and end the response cleanly when the client falls too far behind.
   */
  #queue: Uint8Array[] = [];
  #queuedBytes = 0;
  /** The client is waiting for the next chunk: hand it over directly. */
  #reading = false;
  /** close() was called while chunks were still queued: end once they are read. */
  #closing = false;
  #open = true;
  readonly #keepAlives: KeepAlives;
  #resolveClosed!: (reason: SseEndReason) => void;

  constructor(readonly maxBufferedBytes: number, clock: Clock) {
    this.closed = new Promise((resolve) => this.#resolveClosed = resolve);
    this.body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#controller = controller;
        },
        pull: () => this.#pull(),
        cancel: () => this.#finish("client_gone"),
      },
      { highWaterMark: 0 },
    );
    this.#keepAlives = keepAlivesOf(clock);
    this.#keepAlives.add(this);
  }

  /** A comment that keeps proxies from cutting an idle stream (KeepAlives sends them). */
  keepAlive(): void {
    this.#enqueue(": keep-alive\n\n");
  }

  get open(): boolean {
    return this.#open && !this.#closing;
  }

  write(event: SseEvent): boolean {
    return this.#enqueue(formatEvent(event));
  }

  close(): void {
    if (!this.open) return;
    if (this.#queue.length > 0) {
      this.#closing = true;
      return;
    }
    this.#end("closed");
  }

  #enqueue(text: string): boolean {
    if (!this.open) return false;
    const chunk = encoder.encode(text);
    if (this.#reading) {
      this.#reading = false;
      this.#controller.enqueue(chunk);
      return true;
    }
    this.#queue.push(chunk);
    this.#queuedBytes += chunk.byteLength;
    if (this.#queuedBytes > this.maxBufferedBytes) {
      this.#end("overflow");
      return false;
    }
    return true;
  }

  #pull(): void {
    const chunk = this.#queue.shift();
    if (!chunk) {
      this.#reading = true;
      return;
    }
    this.#queuedBytes -= chunk.byteLength;
    this.#controller.enqueue(chunk);
    if (this.#closing && this.#queue.length === 0) this.#end("closed");
  }

  /** Drops what is queued and ends the response. */
  #end(reason: SseEndReason): void {
    this.#queue = [];
    this.#queuedBytes = 0;
    try {
      this.#controller.close();
    } catch { /* the client is gone already */ }
    this.#finish(reason);
  }

  #finish(reason: SseEndReason): void {
    if (!this.#open) return;
    this.#open = false;
    this.#closing = false;
    this.#keepAlives.delete(this);
    this.#resolveClosed(reason);
  }
}

export const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
} as const;
