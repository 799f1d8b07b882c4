/**
 * Cuts an SSE byte stream into whole events (WHATWG HTML §9.2.6: an event ends at an empty
 * line; lines end with CRLF, LF or CR) and refuses any event larger than a bound, without
 * holding more than that bound. Each byte is looked at once: an event that arrives in a
 * thousand small chunks costs what it would in one.
 *
 * Bytes pass through unchanged and in order, only regrouped: whole events leave together, so
 * that the parser downstream (the SDK's) sees each event in one piece.
 */

const LF = 10;
const CR = 13;

/** Stands in the output where an event too large to pass was dropped. */
export const OVERSIZED = Symbol("an event larger than the limit");

export type Frame = Uint8Array | typeof OVERSIZED;

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

  constructor(readonly maxEventBytes: number) {}

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
        from = eventStart = next;
        continue;
      }
      if (this.#partsBytes + next - eventStart > this.maxEventBytes) {
        if (eventStart > from) out.push(chunk.subarray(from, eventStart));
        out.push(OVERSIZED);
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
    if (this.#skipping) return out;
    const tail = chunk.length - eventStart;
    if (this.#partsBytes + tail > this.maxEventBytes) {
      out.push(OVERSIZED);
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
