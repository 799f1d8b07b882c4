/**
 * Log lines leave in batches: lines written within `FLUSH_AFTER_MS` of the first go out in one
 * write (or sooner, past `maxBufferedBytes`). A busy gateway writes an access line and an audit
 * line per call; one `write(2)` per line cost more CPU than the proxying itself, and one per
 * turn of the event loop still cost a timer and a write per call when calls come one at a time
 * (about 4% of the gateway's CPU per call, bench scenario nginx at c=1). `flush()` is called
 * before the process exits, so nothing is lost on a normal stop; a process killed outright
 * loses at most the last `FLUSH_AFTER_MS` of lines.
 */
const encoder = new TextEncoder();
/** How long a line may wait for others to go out with it. */
export const FLUSH_AFTER_MS = 20;

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
      // A platform timer on purpose: a batching window, not a span of gateway time.
      setTimeout(flush, FLUSH_AFTER_MS);
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
