/**
 * A Streamable HTTP backend may answer a POST with an SSE stream even when the stream carries
 * nothing but the response (servers built with the SDK do by default). The SDK's transport
 * parses every such stream through two `TransformStream`s, which cost about 100 µs of CPU a
 * call, three times what a JSON answer costs. This `fetch` wrapper reads the start of an SSE
 * answer itself: when the first message in it is the response, that message is handed to the
 * transport as a JSON answer (the rest of the stream, which the spec says ends there, is read
 * to its end in the background so the connection can be reused). When anything else comes
 * first (progress, a log message, a request to the client), the stream is handed over
 * untouched, bytes already read included, and flows as it arrives.
 */

const decoder = new TextDecoder();

interface SseEvent {
  event: string;
  data: string;
}

/**
 * Splits SSE text into events as it arrives (WHATWG HTML §9.2.6, without `retry`/`id` use).
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
  }
}

function isResponse(message: unknown): boolean {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return false;
  const m = message as Record<string, unknown>;
  return m.jsonrpc === "2.0" && "id" in m && !("method" in m) && ("result" in m || "error" in m);
}

/**
 * Wraps `fetch` so that a POST's SSE answer holding only the response becomes a JSON answer.
 * What is read before the response is held for the transport in case the stream must be handed
 * over; past `maxHeldBytes` of it (comments, events that are not messages) it is handed over.
 */
export function sseAnswersAsJson(
  fetch: typeof globalThis.fetch,
  maxHeldBytes = 1024 * 1024,
): typeof globalThis.fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const type = response.headers.get("content-type") ?? "";
    if (
      (init?.method ?? "GET").toUpperCase() !== "POST" || response.status !== 200 ||
      !type.toLowerCase().startsWith("text/event-stream") || !response.body
    ) {
      return response;
    }
    const reader = response.body.getReader();
    const events = new SseEventReader();
    const seen: Uint8Array[] = [];
    let held = 0;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return replay(response, seen, reader);
      seen.push(value);
      held += value.length;
      for (const event of events.push(decoder.decode(value, { stream: true }))) {
        if (event.event !== "" && event.event !== "message") continue;
        let message: unknown;
        try {
          message = JSON.parse(event.data);
        } catch {
          // Not JSON: the transport reports it as it always has.
          return replay(response, seen, reader);
        }
        if (!isResponse(message)) return replay(response, seen, reader);
        void drain(reader);
        const headers = new Headers(response.headers);
        headers.set("content-type", "application/json");
        headers.delete("content-length");
        return new Response(event.data, { status: 200, statusText: response.statusText, headers });
      }
      if (held > maxHeldBytes) return replay(response, seen, reader);
    }
  };
}

/** The answer as the backend sent it: the bytes read so far, then the rest as it comes. */
function replay(
  response: Response,
  seen: Uint8Array[],
  reader: ReadableStreamDefaultReader<Uint8Array>,
): Response {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of seen) controller.enqueue(chunk);
    },
    async pull(controller) {
      try {
        const { value, done } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (error) {
        controller.error(error);
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/** Reads what follows the response, so the connection is free once the backend ends it. */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  try {
    while (!(await reader.read()).done) { /* after the response, nothing is owed to anyone */ }
  } catch { /* the connection ended: nothing was waiting for it */ }
}
