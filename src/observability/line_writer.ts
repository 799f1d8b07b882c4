/**
 * Log lines leave in batches: lines written during one turn of the event loop go out in one
 * write when the turn ends (or sooner, past `maxBufferedBytes`). A busy gateway writes an
 * access line and an audit line per call; one `write(2)` per line cost more CPU than the
 * proxying itself. `flush()` is called before the process exits, so nothing is lost on a
 * normal stop.
 */
const encoder = new TextEncoder();

export interface LineWriter {
  (line: string): void;
  flush(): void;
}

export function batchedLineWriter(
  sink: (bytes: Uint8Array) => void,
  maxBufferedBytes = 64 * 1024,
): LineWriter {
  let pending = "";
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (!pending) return;
    const bytes = encoder.encode(pending);
    pending = "";
    sink(bytes);
  };
  const write = (line: string) => {
    pending += line + "\n";
    if (pending.length >= maxBufferedBytes) return flush();
    if (!scheduled) {
      scheduled = true;
      // A platform timer on purpose: "when this turn ends", not a span of gateway time.
      setTimeout(flush, 0);
    }
  };
  return Object.assign(write, { flush });
}

/** Writes all of `bytes` to stderr, synchronously (a log line is never half written). */
export function writeStderr(bytes: Uint8Array): void {
  for (let written = 0; written < bytes.length;) {
    written += Deno.stderr.writeSync(bytes.subarray(written));
  }
}
