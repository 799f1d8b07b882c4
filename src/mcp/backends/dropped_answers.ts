/**
 * Whose answer an SSE event was, from the ends the framer kept of it (sse_frames.ts) after it
 * was dropped for its size: a legacy SSE backend sends every answer on its one stream, so the
 * request a dropped answer was for is found by the JSON-RPC `id` in the event's first bytes
 * (where JSON serializers put it, before the large `result`) or, failing that, its last ones
 * (`…,"id":7}`). Only an event that shows itself a response (a top-level `result` or `error`
 * key in its first bytes) is taken as one: a backend's own request has an `id` too, of
 * another numbering, and must never answer a client's. An event that cannot be placed is only
 * told of; the request it answered then meets its timeout.
 */
import type { RequestId } from "../protocol/jsonrpc.ts";
import type { DropWatcher } from "./sse_frames.ts";

const decoder = new TextDecoder();

/** What the start of a JSON object says at its top level. */
interface HeadFields {
  keys: Set<string>;
  id?: RequestId;
}

/** A dropped event whose request is known only once its end has come. */
export const AT_ITS_END = Symbol("placed at the event's end");

/** What is known of one dropped event's request. */
interface Placement {
  request: RequestId | undefined | typeof AT_ITS_END;
  /** Still waiting in line for the framer's OVERSIZED marker it stands for. */
  queued: boolean;
}

export class DroppedAnswers implements DropWatcher {
  /** The event being dropped: a response whose id its start did not show. */
  #awaitingTail?: Placement;
  /** Per dropped event, in order, what is known of its request. */
  readonly #atStart: Placement[] = [];
  /** Requests of dropped events placed by their ends after their markers went by. */
  readonly #atEnd: (RequestId | undefined)[] = [];

  started(head: Uint8Array): void {
    const fields = headFields(eventData(decoder.decode(head)));
    const response = (fields.keys.has("result") || fields.keys.has("error")) &&
      !fields.keys.has("method");
    const placement: Placement = {
      request: !response ? undefined : fields.id ?? AT_ITS_END,
      queued: true,
    };
    this.#awaitingTail = placement.request === AT_ITS_END ? placement : undefined;
    this.#atStart.push(placement);
  }

  ended(tail: Uint8Array): void {
    const placement = this.#awaitingTail;
    if (!placement) return;
    this.#awaitingTail = undefined;
    const request = tailId(eventData(decoder.decode(tail), true));
    // Its end came with its start (one chunk): it is answered where it stood.
    if (placement.queued) placement.request = request;
    else this.#atEnd.push(request);
  }

  /** What is known of the request of the next dropped event (the framer's next OVERSIZED). */
  nextDropped(): RequestId | undefined | typeof AT_ITS_END {
    const placement = this.#atStart.shift();
    if (placement) placement.queued = false;
    return placement?.request;
  }

  /** The dropped events placed by their ends since the last call, in order. */
  takeEnded(): (RequestId | undefined)[] {
    return this.#atEnd.splice(0);
  }
}

/** The `data:` of an event's text (or of a piece of it: `partial` when it starts mid-line). */
export function eventData(text: string, partial = false): string {
  const lines = text.split(/\r\n|\r|\n/);
  return lines
    .map((line, index) =>
      line.startsWith("data:")
        ? line.slice(line.startsWith("data: ") ? 6 : 5)
        : partial && index === 0
        ? line
        : undefined
    )
    .filter((line) => line !== undefined)
    .join("\n");
}

/** The top-level keys of a JSON object's first bytes, and its `id` when one is among them. */
export function headFields(json: string): HeadFields {
  const fields: HeadFields = { keys: new Set() };
  let at = json.search(/\S/);
  if (json[at] !== "{") return fields;
  let depth = 0;
  let expectKey = false;
  for (; at < json.length; at++) {
    const c = json[at];
    if (c === '"') {
      const end = stringEnd(json, at);
      if (end < 0) break;
      if (depth === 1 && expectKey) {
        const key = parsed(json.slice(at, end + 1));
        if (typeof key !== "string") break;
        fields.keys.add(key);
        if (key === "id") {
          const value = /^\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.)*")/
            .exec(json.slice(end + 1, end + 300));
          const id = value && parsed(value[1]);
          if (typeof id === "string" || typeof id === "number") fields.id = id;
        }
        expectKey = false;
      }
      at = end;
    } else if (c === "{" || c === "[") {
      depth++;
      expectKey = c === "{" && depth === 1;
    } else if (c === "}" || c === "]") depth--;
    else if (c === "," && depth === 1) expectKey = true;
  }
  return fields;
}

/** The `id` a JSON object's last bytes end with (`"id":7}`): then it is the top level's. */
export function tailId(json: string): RequestId | undefined {
  const match = /"id"\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.)*")\s*\}\s*$/
    .exec(json);
  const id = match && parsed(match[1]);
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}

/** The index of the quote ending the string that opens at `open`, or -1. */
function stringEnd(text: string, open: number): number {
  for (let at = open + 1; at < text.length; at++) {
    if (text[at] === "\\") at++;
    else if (text[at] === '"') return at;
  }
  return -1;
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
