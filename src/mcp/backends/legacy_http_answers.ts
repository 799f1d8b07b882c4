/**
 * How the 2025 Streamable HTTP transport (legacy_http.ts) reads what a backend answers, held to
 * `limits.maxMessageBytes` exactly as bounded_answers.ts holds every other HTTP answer: a JSON
 * body counts whole, an SSE stream counts per event. An answer with a declared length within
 * the limit is taken in one piece (the gateway's HTTP client has usually read it already), so
 * the usual answer costs no stream machinery at all.
 */
import { GatehouseError } from "../../core/errors.ts";
import { headerOf } from "../../net/http1_response.ts";
import { type BoundedAnswerOptions, boundedPlain, SSE_FRAMING_BYTES } from "./bounded_answers.ts";
import { OVERSIZED, SseFramer } from "./sse_frames.ts";
import type { SseEvent, SseEventReader } from "./sse_answers.ts";

/** The backend answered, but not with what the protocol asks for (said as it is). */
export class BackendAnswerError extends GatehouseError<"backend_answer"> {
  constructor(message: string) {
    super("backend_answer", message);
  }
}

export type AnswerLimits = Pick<BoundedAnswerOptions, "maxMessageBytes" | "onOversized">;

/** What reading an SSE answer tells its owner, event by event. */
export interface EventSink {
  event(event: SseEvent): void;
  /** An event past the limit was left out; true stops the reading (the rest is abandoned). */
  oversized(): boolean;
}

/** The answer's media type, lower case and without parameters; undefined without one. */
export function mediaType(response: Response): string | undefined {
  const header = headerOf(response, "content-type");
  if (header === null) return undefined;
  // What backends send, as they send it: no parsing needed.
  if (header === "application/json" || header === "text/event-stream") return header;
  const semicolon = header.indexOf(";");
  return (semicolon < 0 ? header : header.slice(0, semicolon)).trim().toLowerCase();
}

/** A declared length within `max` of a body sent as it is (not compressed). */
function wholeWithin(response: Response, max: number): boolean {
  const encoding = headerOf(response, "content-encoding");
  if (encoding !== null && encoding.trim().toLowerCase() !== "identity") return false;
  const length = headerOf(response, "content-length");
  return length !== null && Number(length) <= max;
}

/** The whole body as text; past the limit, `AnswerTooLargeError` (and the rest abandoned). */
export async function readWhole(response: Response, limits: AnswerLimits): Promise<string> {
  return await (await boundedPlain(response, limits)).text();
}

/** Lets go of an answer whose body nobody needs. */
export async function discard(response: Response): Promise<void> {
  if (!response.bodyUsed) await response.body?.cancel().catch(() => {});
}

/**
 * Reads an SSE answer to its end, handing each event to `sink` in order and no event past the
 * limit; `events` keeps the stream's last event id and retry time. Resolves at the stream's
 * end (or when `sink` stops it), rejects when it breaks.
 */
export async function readEvents(
  response: Response,
  limits: AnswerLimits,
  events: SseEventReader,
  sink: EventSink,
): Promise<void> {
  const max = limits.maxMessageBytes;
  if (wholeWithin(response, max)) {
    // No event in it can pass the limit: one decode, one parse.
    for (const event of events.push(await response.text())) sink.event(event);
    return;
  }
  const body = response.body;
  if (!body) return;
  const reader = body.getReader();
  const framer = new SseFramer(max + SSE_FRAMING_BYTES);
  const decoder = new TextDecoder();
  let finished = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        finished = true;
        const rest = framer.end();
        if (rest) dispatch(events, decoder.decode(rest), sink);
        return;
      }
      for (const frame of framer.push(value)) {
        if (frame !== OVERSIZED) dispatch(events, decoder.decode(frame, { stream: true }), sink);
        else if (sink.oversized()) return;
      }
    }
  } finally {
    if (!finished) reader.cancel().catch(() => {});
  }
}

function dispatch(events: SseEventReader, text: string, sink: EventSink): void {
  for (const event of events.push(text)) sink.event(event);
}

/** Redirects followed within the backend's origin, at most this many in a row (as the SDK). */
export const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * Where a redirect points when the gateway may follow it: the same origin (or its https form,
 * both on default ports), no new credentials in the URL, and the method kept (301, 302 and
 * 303 turn a POST into a GET, so only 307 and 308 are followed for anything but a GET).
 */
export function redirectWithinOrigin(
  response: Response,
  from: URL,
  method: string,
): URL | undefined {
  const target = redirectTarget(response, from);
  if (!target) return undefined;
  if (method !== "GET" && response.status !== 307 && response.status !== 308) return undefined;
  const credentials = target.username || target.password;
  if (credentials && (target.username !== from.username || target.password !== from.password)) {
    return undefined;
  }
  const sameOrigin = target.protocol === from.protocol && target.host === from.host;
  const upgraded = from.protocol === "http:" && target.protocol === "https:" &&
    from.port === "" && target.port === "" && from.hostname === target.hostname;
  return sameOrigin || upgraded ? target : undefined;
}

/** Words for a redirect that was not followed; undefined when `response` is no redirect. */
export function unfollowedRedirect(response: Response, from: URL): string | undefined {
  const target = redirectTarget(response, from);
  if (!target) return undefined;
  target.username =
    target.password =
    target.search =
    target.hash =
      "";
  return `the backend redirects to ${target.href}, which the gateway does not follow ` +
    "(another origin, or a POST turned into a GET): set the server's url to where it points";
}

function redirectTarget(response: Response, from: URL): URL | undefined {
  if (!REDIRECTS.has(response.status)) return undefined;
  const location = headerOf(response, "location");
  if (!location) return undefined;
  try {
    return new URL(location, from);
  } catch {
    return undefined;
  }
}
