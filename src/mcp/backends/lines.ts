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
  for await (const chunk of stream) {
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
