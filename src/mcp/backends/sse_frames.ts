/**
 * Cuts an SSE byte stream into whole events (WHATWG HTML §9.2.6: an event ends at an empty
 * line; lines end with CRLF, LF or CR) and refuses any event larger than a bound, without
 * holding more than that bound. Each byte is looked at once: an event that arrives in a
 * thousand small chunks costs what it would in one.
 *
 * Bytes pass through unchanged and in order, only regrouped: whole events leave together, so
 * that the parser downstream (the SDK's) sees each event in one piece.
 *
 * A `DropWatcher` is shown the ends of each dropped event (its first `HEAD_BYTES`, its last
 * `TAIL_BYTES`), never more: enough to read whose answer it was.
 */

const LF = 10;
const CR = 13;

/** Stands in the output where an event too large to pass was dropped. */
export const OVERSIZED = Symbol("an event larger than the limit");

export type Frame = Uint8Array | typeof OVERSIZED;

/** How much of a dropped event's start and end a `DropWatcher` sees. */
export const HEAD_BYTES = 4096;
export const TAIL_BYTES = 512;

/** Told of each dropped event: its start once it is known to be too large, its end once seen. */
export interface DropWatcher {
  started(head: Uint8Array): void;
  ended(tail: Uint8Array): void;
}

export class SseFramer {
  /** Bytes of the event not yet complete, from earlier chunks. */
  #parts: Uint8Array[] = [];
  #partsBytes = 0;
  /** The last byte seen ended a line (true at the start: an empty line there ends nothing). */
  #atLineStart = true;
  /** The last byte seen was a CR: an LF first in the next chunk belongs to it. */
  #afterCR = false;
  /** Inside an oversized event: its bytes are dropped up to its end. */
  #skipping = false;
  /** The last bytes of the event being dropped, for the watcher (with one only). */
  #skippedTail: Uint8Array = new Uint8Array(0);

  constructor(readonly maxEventBytes: number, private readonly watcher?: DropWatcher) {}

  /** Whole events completed by `chunk` (several may share a frame), and OVERSIZED markers. */
  push(chunk: Uint8Array): Frame[] {
    const out: Frame[] = [];
    let from = 0; // first byte of `chunk` not yet passed on or dropped
    let eventStart = 0; // where the current event starts in `chunk` (0: in an earlier chunk)
    let i = 0;
    let nextLF = -2;
    let nextCR = -2;
    if (this.#afterCR) {
      this.#afterCR = false;
      if (chunk[0] === LF) i = 1;
    }
    while (i < chunk.length) {
      // Each search starts where the last one stopped: linear in the chunk.
      if (nextLF !== -1 && nextLF < i) nextLF = chunk.indexOf(LF, i);
      if (nextCR !== -1 && nextCR < i) nextCR = chunk.indexOf(CR, i);
      const eol = nextLF < 0 ? nextCR : nextCR < 0 ? nextLF : Math.min(nextLF, nextCR);
      if (eol < 0) {
        this.#atLineStart = false;
        break;
      }
      const blank = this.#atLineStart && eol === i;
      let next = eol + 1;
      if (chunk[eol] === CR) {
        if (next === chunk.length) this.#afterCR = true;
        else if (chunk[next] === LF) next++;
      }
      this.#atLineStart = true;
      i = next;
      if (!blank) continue;
      // The event [eventStart, next) is complete.
      if (this.#skipping) {
        this.#skipping = false;
        this.watcher?.ended(lastBytes([this.#skippedTail], chunk.subarray(eventStart, next)));
        from = eventStart = next;
        continue;
      }
      if (this.#partsBytes + next - eventStart > this.maxEventBytes) {
        if (eventStart > from) out.push(chunk.subarray(from, eventStart));
        out.push(OVERSIZED);
        if (this.watcher) {
          const piece = chunk.subarray(eventStart, next);
          this.watcher.started(firstBytes(this.#parts, piece));
          this.watcher.ended(lastBytes(this.#parts, piece));
        }
        this.#dropParts();
        from = eventStart = next;
        continue;
      }
      if (this.#partsBytes > 0) {
        out.push(concat(this.#parts, this.#partsBytes, chunk.subarray(0, next)));
        this.#dropParts();
        from = next;
      }
      eventStart = next;
    }
    if (eventStart > from) out.push(chunk.subarray(from, eventStart));
    if (this.#skipping) {
      if (this.watcher) {
        this.#skippedTail = lastBytes([this.#skippedTail], chunk.subarray(eventStart));
      }
      return out;
    }
    const tail = chunk.length - eventStart;
    if (this.#partsBytes + tail > this.maxEventBytes) {
      out.push(OVERSIZED);
      if (this.watcher) {
        const piece = chunk.subarray(eventStart);
        this.watcher.started(firstBytes(this.#parts, piece));
        this.#skippedTail = lastBytes(this.#parts, piece);
      }
      this.#dropParts();
      this.#skipping = true;
    } else if (tail > 0) {
      this.#parts.push(chunk.subarray(eventStart));
      this.#partsBytes += tail;
    }
    return out;
  }

  /** At the end of the stream: the bytes of an event that never ended, if any. */
  end(): Uint8Array | undefined {
    if (this.#skipping || this.#partsBytes === 0) return undefined;
    const rest = concat(this.#parts, this.#partsBytes);
    this.#dropParts();
    return rest;
  }

  #dropParts(): void {
    this.#parts = [];
    this.#partsBytes = 0;
  }
}

function concat(parts: Uint8Array[], partsBytes: number, last?: Uint8Array): Uint8Array {
  const joined = new Uint8Array(partsBytes + (last?.length ?? 0));
  let at = 0;
  for (const part of parts) {
    joined.set(part, at);
    at += part.length;
  }
  if (last) joined.set(last, at);
  return joined;
}

/** A copy of the first HEAD_BYTES of `parts` followed by `last`. */
function firstBytes(parts: Uint8Array[], last: Uint8Array): Uint8Array {
  const head = new Uint8Array(HEAD_BYTES);
  let at = 0;
  for (const part of [...parts, last]) {
    const take = part.subarray(0, HEAD_BYTES - at);
    head.set(take, at);
    at += take.length;
    if (at === HEAD_BYTES) break;
  }
  return head.subarray(0, at);
}

/** A copy of the last TAIL_BYTES of `parts` followed by `last`. */
function lastBytes(parts: Uint8Array[], last: Uint8Array): Uint8Array {
  const tail = new Uint8Array(TAIL_BYTES);
  let at = TAIL_BYTES;
  for (const part of [last, ...parts.toReversed()]) {
    const take = part.subarray(Math.max(0, part.length - at));
    at -= take.length;
    tail.set(take, at);
    if (at === 0) break;
  }
  return tail.subarray(at);
}
