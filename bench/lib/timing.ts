/** One call after another, timed: for scenarios that measure a single operation in process. */

export interface CallTimes {
  /** Calls a second. */
  rate: number;
  /** Median milliseconds of one call. */
  p50: number;
  /** 99th-percentile milliseconds of one call. */
  p99: number;
}

/** The middle value (the upper one of an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Runs `call(0)` … `call(calls - 1)` in turn and measures them. */
export async function timeCalls(
  calls: number,
  call: (i: number) => Promise<unknown>,
): Promise<CallTimes> {
  const durations: number[] = [];
  const started = performance.now();
  for (let i = 0; i < calls; i++) {
    const at = performance.now();
    await call(i);
    durations.push(performance.now() - at);
  }
  const elapsed = performance.now() - started;
  durations.sort((a, b) => a - b);
  return {
    rate: calls / (elapsed / 1000),
    p50: median(durations),
    p99: durations[Math.floor(durations.length * 0.99)],
  };
}
