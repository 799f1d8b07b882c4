/**
 * Splits a byte stream into newline-delimited lines, refusing any line longer than `maxBytes`
 * so a backend that never writes a newline cannot grow the gateway's memory without bound.
 */
import { GatehouseError } from "../../core/errors.ts";

export class LineTooLongError extends GatehouseError<"line_too_long"> {
  constructor(readonly maxBytes: number) {
    super("line_too_long", `a line exceeded ${maxBytes} bytes`);
  }
}

/** How much of a skipped line's start and end `onTooLong` hears: where a JSON-RPC `id` sits. */
export const KEPT_HEAD_CHARS = 4096;
export const KEPT_TAIL_CHARS = 300;

export interface ReadLinesOptions {
  /** Cut an over-long line to `maxBytes` and skip the rest of it (for logs). */
  truncate?: boolean;
  /**
   * Skip an over-long line and hand its first and last characters here (a shared process's
   * answer too large for the limit fails only the call it answers); nothing more of it is
   * kept, however long it grows.
   */
  onTooLong?: (head: string, tail: string) => void;
}

/**
 * Lines of `stream`. With neither option an over-long line throws `LineTooLongError` (for
 * protocol streams whose one reader cannot go on without it).
 */
export async function* readLines(
  stream: ReadableStream<Uint8Array>,
  maxBytes: number,
  { truncate = false, onTooLong }: ReadLinesOptions = {},
): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let pending = "";
  /** While an over-long line is skipped: its start, and the last characters seen of it. */
  let skipping: { head: string; tail: string } | undefined;
  for await (const chunk of chunksOf(stream)) {
    pending += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, newline).replace(/\r$/, "");
      pending = pending.slice(newline + 1);
      if (skipping) {
        onTooLong?.(skipping.head, (skipping.tail + line).slice(-KEPT_TAIL_CHARS));
        skipping = undefined;
        continue;
      }
      if (line.length <= maxBytes || truncate) {
        yield line.slice(0, maxBytes);
        continue;
      }
      if (!onTooLong) throw new LineTooLongError(maxBytes);
      onTooLong(line.slice(0, KEPT_HEAD_CHARS), line.slice(-KEPT_TAIL_CHARS));
    }
    if (pending.length > maxBytes) {
      if (!truncate && !onTooLong) throw new LineTooLongError(maxBytes);
      if (truncate && !skipping) yield pending.slice(0, maxBytes);
      skipping = skipping
        ? { head: skipping.head, tail: (skipping.tail + pending).slice(-KEPT_TAIL_CHARS) }
        : { head: pending.slice(0, KEPT_HEAD_CHARS), tail: pending.slice(-KEPT_TAIL_CHARS) };
      pending = "";
    }
  }
  pending += decoder.decode();
  if (skipping) onTooLong?.(skipping.head, (skipping.tail + pending).slice(-KEPT_TAIL_CHARS));
  else if (pending.length > 0) yield pending;
}

/** A read's buffer at first, and the most it grows to (doubling when a read fills it). */
const FIRST_READ_BYTES = 1024;
const MOST_READ_BYTES = 64 * 1024;

/**
 * The stream's chunks, read into a buffer of the gateway's choosing when the stream lets it
 * (a byte stream, as a child's stdout and stderr are): such a stream otherwise reads 64 KiB
 * per parked read, and a stdio session keeps two parked for its whole life. Each chunk is good
 * until the next is asked for (its bytes are read into again).
 */
export async function* chunksOf(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  let reader: ReadableStreamBYOBReader;
  try {
    reader = stream.getReader({ mode: "byob" });
  } catch {
    yield* stream; // not a byte stream: its own chunks
    return;
  }
  let buffer = new ArrayBuffer(FIRST_READ_BYTES);
  try {
    for (;;) {
      const { value, done } = await reader.read(new Uint8Array(buffer));
      if (done || !value) return;
      yield value;
      buffer = value.buffer as ArrayBuffer;
      if (value.byteLength === buffer.byteLength && buffer.byteLength < MOST_READ_BYTES) {
        buffer = new ArrayBuffer(buffer.byteLength * 2);
      }
    }
  } finally {
    reader.releaseLock();
  }
}
