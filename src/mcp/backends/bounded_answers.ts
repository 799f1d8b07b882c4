/**
 * Holds every answer an HTTP backend sends to `limits.maxMessageBytes` per message, as the
 * stdio transport holds each line: a backend (broken, or hostile) cannot make the gateway buffer
 * an answer of any size, nor decompress one without bound. Bodies are read as they arrive and
 * abandoned (the connection closed) as soon as they pass the limit; nothing larger is held.
 *
 * - A JSON (or any non-SSE) answer counts whole, after decompression. Past the limit the
 *   request fails with `AnswerTooLargeError`; the session goes on.
 * - An SSE answer counts per event (`SseFramer`), with SSE_FRAMING_BYTES allowed for field
 *   names and line breaks. An oversized event in the stream that answers a POSTed request ends
 *   that stream, and the request gets a JSON-RPC error naming the limit; the session goes on.
 *   On any other stream (a Streamable HTTP session's GET stream) the event is dropped, told to
 *   `onOversized`, and the stream goes on; with `oversizedEvents: "answer"` (a legacy SSE
 *   backend, whose one stream carries every answer) the request a dropped answer was for is
 *   read from the event's ends (dropped_answers.ts) and gets the JSON-RPC error in its place,
 *   and the stream and its session go on.
 */
import { GatehouseError } from "../../core/errors.ts";
import { headerOf } from "../../net/http1_response.ts";
import { errorResponse, type RequestId, RpcErrorCode } from "../protocol/jsonrpc.ts";
import { AT_ITS_END, DroppedAnswers } from "./dropped_answers.ts";
import { OVERSIZED, SseFramer } from "./sse_frames.ts";

/** What an SSE event may carry beyond its message: `event:`, `id:`, `data: ` and line breaks. */
export const SSE_FRAMING_BYTES = 16 * 1024;

const encoder = new TextEncoder();

export class AnswerTooLargeError extends GatehouseError<"answer_too_large"> {
  constructor(message: string) {
    super("answer_too_large", message);
  }
}

export interface BoundedAnswerOptions {
  maxMessageBytes: number;
  /**
   * An oversized event on a stream that answers no POSTed request: dropped, and with "answer"
   * the request it answered (found by its id) gets the size error instead.
   */
  oversizedEvents: "skip" | "answer";
  /** Told of each oversized answer or event, with the words the caller will see. */
  onOversized?: (message: string) => void;
}

/** `1048576` → "1 MiB"; sizes that are not whole KiB or MiB in bytes. */
export function describeSize(bytes: number): string {
  if (bytes >= 1_048_576 && bytes % 1_048_576 === 0) return `${bytes / 1_048_576} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/** The words for an answer past the limit; `decompressed` when it was small on the wire. */
export function answerTooLargeMessage(maxBytes: number, decompressed = false): string {
  return `the backend's answer is larger than limits.maxMessageBytes (${describeSize(maxBytes)})${
    decompressed ? " once decompressed" : ""
  }; ask the backend for less, or raise the limit`;
}

/** Wraps `fetch` so that no answer it returns can carry a message past the limit. */
export function boundedAnswers(
  fetch: typeof globalThis.fetch,
  options: BoundedAnswerOptions,
): typeof globalThis.fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const type = headerOf(response, "content-type")?.split(";")[0].trim().toLowerCase();
    if (type === "text/event-stream" && response.body) {
      const post = (init?.method ?? "GET").toUpperCase() === "POST";
      return withBody(response, boundedEvents(response.body, options, post ? init?.body : null));
    }
    return await boundedPlain(response, options);
  };
}

/**
 * A JSON (or any non-SSE) answer held to the limit, counted whole after decompression: the
 * answer itself when its declared length is within the limit, else one whose body errors once
 * past it. A declared length past the limit throws at once.
 */
export async function boundedPlain(
  response: Response,
  options: Omit<BoundedAnswerOptions, "oversizedEvents">,
): Promise<Response> {
  const max = options.maxMessageBytes;
  const encoding = headerOf(response, "content-encoding")?.trim().toLowerCase();
  const encoded = !!encoding && encoding !== "identity";
  const declared = Number(headerOf(response, "content-length") ?? NaN);
  // A declared length within the limit, and no decompression: the body is what was declared.
  // (Asked before `body`, which would turn a body read whole into a stream.)
  if (!encoded && declared <= max) return response;
  if (!response.body) return response;
  const message = answerTooLargeMessage(max, encoded);
  if (!encoded && declared > max) {
    await response.body.cancel().catch(() => {});
    options.onOversized?.(message);
    throw new AnswerTooLargeError(message);
  }
  return withBody(
    response,
    boundedBytes(response.body, max, () => {
      options.onOversized?.(message);
      return new AnswerTooLargeError(message);
    }),
  );
}

/** The body, erroring (and abandoning the rest) once more than `max` bytes have come. */
function boundedBytes(
  body: ReadableStream<Uint8Array>,
  max: number,
  tooLarge: () => Error,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let count = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await reader.read();
      if (done) return controller.close();
      count += value.length;
      if (count > max) {
        void reader.cancel().catch(() => {});
        return controller.error(tooLarge());
      }
      controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  }, { highWaterMark: 0 });
}

/** The event stream regrouped into whole events, each within the limit (see the top). */
function boundedEvents(
  body: ReadableStream<Uint8Array>,
  options: BoundedAnswerOptions,
  posted: BodyInit | null | undefined,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const dropped = options.oversizedEvents === "answer" ? new DroppedAnswers() : undefined;
  const framer = new SseFramer(options.maxMessageBytes + SSE_FRAMING_BYTES, dropped);
  const message = answerTooLargeMessage(options.maxMessageBytes);
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  /** The error for the request a dropped event answered; false when it names none. */
  const answerInstead = (id: RequestId | undefined): boolean => {
    if (id === undefined) {
      options.onOversized?.(
        `dropped an event from the backend that answers no request it names: ${message}`,
      );
      return false;
    }
    options.onOversized?.(message);
    controller.enqueue(errorEvent(id, message));
    return true;
  };
  return new ReadableStream<Uint8Array>({
    start(started) {
      controller = started;
    },
    async pull() {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) {
          const rest = framer.end();
          if (rest) controller.enqueue(rest);
          return controller.close();
        }
        let passed = false;
        for (const frame of framer.push(value)) {
          if (frame !== OVERSIZED) {
            controller.enqueue(frame);
            passed = true;
            continue;
          }
          const answer = posted === null ? undefined : errorEvents(posted, message);
          if (answer) {
            // The request this stream answers fails; what else the stream held goes with it.
            options.onOversized?.(message);
            controller.enqueue(answer);
            void reader.cancel().catch(() => {});
            return controller.close();
          }
          if (!dropped) {
            options.onOversized?.(`dropped an event from the backend: ${message}`);
            continue;
          }
          // The dropped answer's request gets the error in its place (placed by its id).
          const placed = dropped.nextDropped();
          if (placed !== AT_ITS_END) passed = answerInstead(placed) || passed;
        }
        for (const id of dropped?.takeEnded() ?? []) passed = answerInstead(id) || passed;
        if (passed) return;
      }
    },
    cancel: (reason) => reader.cancel(reason),
  }, { highWaterMark: 0 });
}

/** An SSE error response for each request in a POSTed JSON-RPC body, or undefined if none. */
function errorEvents(posted: BodyInit | undefined, message: string): Uint8Array | undefined {
  if (typeof posted !== "string") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(posted);
  } catch {
    return undefined;
  }
  const ids = (Array.isArray(parsed) ? parsed : [parsed])
    .filter((m) => typeof m === "object" && m !== null && "method" in m && "id" in m)
    .map((m) => m.id);
  if (!ids.length) return undefined;
  return encoder.encode(ids.map((id) => errorText(id, message)).join(""));
}

/** An SSE event answering request `id` with the JSON-RPC error `message`. */
function errorEvent(id: RequestId, message: string): Uint8Array {
  return encoder.encode(errorText(id, message));
}

function errorText(id: RequestId, message: string): string {
  return `event: message\ndata: ${
    JSON.stringify(errorResponse(id, RpcErrorCode.backendError, message))
  }\n\n`;
}

/** The same answer with another body (and the URL it came from, which the SDK may read). */
function withBody(response: Response, body: ReadableStream<Uint8Array>): Response {
  const bounded = new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  if (response.url) Object.defineProperty(bounded, "url", { value: response.url });
  if (response.redirected) Object.defineProperty(bounded, "redirected", { value: true });
  return bounded;
}
