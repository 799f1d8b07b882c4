/**
 * A server-sent-events response body. Writes after the client has gone are dropped, keep-alive
 * comments stop idle connections from being cut by proxies, and `closed` resolves once the
 * stream has ended from either side.
 */

const KEEPALIVE_MS = 25_000;
const encoder = new TextEncoder();

export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
  retryMs?: number;
}

export function formatEvent({ id, event, data, retryMs }: SseEvent): string {
  let text = "";
  if (id !== undefined) text += `id: ${id}\n`;
  if (event !== undefined) text += `event: ${event}\n`;
  if (retryMs !== undefined) text += `retry: ${retryMs}\n`;
  // JSON.stringify output has no raw newlines; split anyway so any data stays one event.
  for (const line of data.split("\n")) text += `data: ${line}\n`;
  return text + "\n";
}

export class SseWriter {
  readonly body: ReadableStream<Uint8Array>;
  readonly closed: Promise<void>;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #open = true;
  #keepalive: ReturnType<typeof setInterval>;
  #resolveClosed!: () => void;

  constructor() {
    this.closed = new Promise((resolve) => this.#resolveClosed = resolve);
    this.body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
      },
      cancel: () => this.#finish(),
    });
    this.#keepalive = setInterval(() => this.#enqueue(": keep-alive\n\n"), KEEPALIVE_MS);
    Deno.unrefTimer(this.#keepalive);
  }

  get open(): boolean {
    return this.#open;
  }

  write(event: SseEvent): boolean {
    return this.#enqueue(formatEvent(event));
  }

  close(): void {
    if (!this.#open) return;
    try {
      this.#controller.close();
    } catch { /* already errored */ }
    this.#finish();
  }

  #enqueue(text: string): boolean {
    if (!this.#open) return false;
    try {
      this.#controller.enqueue(encoder.encode(text));
      return true;
    } catch {
      this.#finish();
      return false;
    }
  }

  #finish(): void {
    if (!this.#open) return;
    this.#open = false;
    clearInterval(this.#keepalive);
    this.#resolveClosed();
  }
}

export const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
} as const;
