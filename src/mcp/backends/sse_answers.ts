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

/** Splits SSE text into events as it arrives (WHATWG HTML §9.2.6, without `retry`/`id` use). */
export class SseEventReader {
  #pending = "";
  #data: string[] = [];
  #event = "";

  push(text: string): SseEvent[] {
    this.#pending += text;
    const events: SseEvent[] = [];
    let newline: number;
    while ((newline = this.#pending.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.#pending.slice(0, newline);
      const width = this.#pending.startsWith("\r\n", newline) ? 2 : 1;
      // A lone \r at the end may be the first half of \r\n: wait for the next chunk.
      if (width === 1 && this.#pending[newline] === "\r" && newline === this.#pending.length - 1) {
        break;
      }
      this.#pending = this.#pending.slice(newline + width);
      if (line === "") {
        // No data (a priming event, say): nothing is dispatched.
        const data = this.#data.join("\n");
        if (data !== "") events.push({ event: this.#event, data });
        this.#data = [];
        this.#event = "";
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "data") this.#data.push(value);
      else if (field === "event") this.#event = value;
    }
    return events;
  }
}

function isResponse(message: unknown): boolean {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return false;
  const m = message as Record<string, unknown>;
  return m.jsonrpc === "2.0" && "id" in m && !("method" in m) && ("result" in m || "error" in m);
}

/** Wraps `fetch` so that a POST's SSE answer holding only the response becomes a JSON answer. */
export function sseAnswersAsJson(fetch: typeof globalThis.fetch): typeof globalThis.fetch {
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
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return replay(response, seen, reader);
      seen.push(value);
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
