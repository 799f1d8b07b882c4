/**
 * Server-sent events as backends write them: text in, events out, as the chunks arrive. Both
 * HTTP backend transports read their answers with it (legacy_http_streams.ts, modern_http.ts).
 */

export interface SseEvent {
  event: string;
  data: string;
}

/**
 * Splits SSE text into events as it arrives (WHATWG HTML §9.2.6). The `id` and `retry` fields
 * are kept for whoever reconnects (`lastEventId`, `retry`), not given with each event.
 * Linear in its input: a line that arrives in many chunks is kept in pieces and joined once,
 * and each chunk is searched for line ends only from where the last search stopped.
 */
export class SseEventReader {
  /** The line not yet ended, in the pieces it came in. */
  #pieces: string[] = [];
  #data: string[] = [];
  #event = "";
  /** The last chunk ended with CR: an LF first in the next one ends no second line. */
  #afterCR = false;
  /** The `id` of the event being read, set when the event has one. */
  #id?: string;
  /** The id of the last event that had one (a priming event without data counts): resume after it. */
  lastEventId?: string;
  /** The reconnection time the server asked for, in milliseconds. */
  retry?: number;

  push(text: string): SseEvent[] {
    const events: SseEvent[] = [];
    let start = 0;
    if (this.#afterCR) {
      this.#afterCR = false;
      if (text.startsWith("\n")) start = 1;
    }
    let nextLF = -2;
    let nextCR = -2;
    while (start < text.length) {
      if (nextLF !== -1 && nextLF < start) nextLF = text.indexOf("\n", start);
      if (nextCR !== -1 && nextCR < start) nextCR = text.indexOf("\r", start);
      const eol = nextLF < 0 ? nextCR : nextCR < 0 ? nextLF : Math.min(nextLF, nextCR);
      if (eol < 0) break;
      let line = text.slice(start, eol);
      if (this.#pieces.length) {
        this.#pieces.push(line);
        line = this.#pieces.join("");
        this.#pieces = [];
      }
      this.#line(line, events);
      start = eol + 1;
      if (text[eol] === "\r") {
        if (start === text.length) this.#afterCR = true;
        else if (text[start] === "\n") start++;
      }
    }
    if (start < text.length) this.#pieces.push(text.slice(start));
    return events;
  }

  #line(line: string, events: SseEvent[]): void {
    if (line === "") {
      if (this.#id !== undefined) {
        this.lastEventId = this.#id;
        this.#id = undefined;
      }
      // No data (a priming event, say): nothing is dispatched.
      const data = this.#data.join("\n");
      if (data !== "") events.push({ event: this.#event, data });
      this.#data = [];
      this.#event = "";
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.#data.push(value);
    else if (field === "event") this.#event = value;
    else if (field === "id") {
      if (!value.includes("\0")) this.#id = value;
    } else if (field === "retry" && /^\d+$/.test(value)) this.retry = Number(value);
  }
}
