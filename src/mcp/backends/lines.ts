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

/**
 * With `truncate`, an over-long line is cut to `maxBytes` and the rest of it skipped (for logs);
 * without it, an over-long line throws `LineTooLongError` (for protocol streams).
 */
export async function* readLines(
  stream: ReadableStream<Uint8Array>,
  maxBytes: number,
  { truncate = false } = {},
): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let pending = "";
  let skipping = false;
  for await (const chunk of chunksOf(stream)) {
    pending += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, newline).replace(/\r$/, "");
      pending = pending.slice(newline + 1);
      if (skipping) {
        skipping = false;
        continue;
      }
      if (line.length > maxBytes && !truncate) throw new LineTooLongError(maxBytes);
      yield line.slice(0, maxBytes);
    }
    if (pending.length > maxBytes) {
      if (!truncate) throw new LineTooLongError(maxBytes);
      if (!skipping) yield pending.slice(0, maxBytes);
      skipping = true;
      pending = "";
    }
  }
  pending += decoder.decode();
  if (pending.length > 0) yield pending;
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
