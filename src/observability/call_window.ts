/**
 * The last hour of calls per server, a minute at a time: how many, how many failed, and their
 * latencies in the metrics' buckets, so the console can draw p50/p99 without a time-series
 * database. Recording is a few array increments; memory is bounded by the configured servers
 * times 60 minutes times the bucket count.
 */
import { LATENCY_BUCKETS } from "./metrics.ts";

export const WINDOW_MINUTES = 60;
const MINUTE_MS = 60_000;

interface Slot {
  /** The minute (epoch ms / 60,000) this slot counts; a stale slot is reset on first use. */
  minute: number;
  calls: number;
  errors: number;
  /** Counts per LATENCY_BUCKETS bound, the last one past every bound. */
  buckets: number[];
}

/** One minute of one server, as a chart reads it. */
export interface MinuteReading {
  /** Epoch ms of the minute's start. */
  at: number;
  calls: number;
  errors: number;
  /** Seconds; undefined in a minute without calls. */
  p50?: number;
  p99?: number;
}

/** The last failure recorded for a server. */
export interface LastFailure {
  at: number;
  outcome: string;
  errorCode?: number;
}

export class CallWindow {
  readonly #servers = new Map<string, Slot[]>();
  readonly #failures = new Map<string, LastFailure>();
  readonly #last = new Map<string, number>();

  record(
    server: string,
    durationMs: number,
    outcome: string,
    now: number,
    errorCode?: number,
  ): void {
    const minute = Math.floor(now / MINUTE_MS);
    let slots = this.#servers.get(server);
    if (!slots) this.#servers.set(server, slots = []);
    const index = minute % WINDOW_MINUTES;
    let slot = slots[index];
    if (!slot || slot.minute !== minute) {
      slot = slots[index] = {
        minute,
        calls: 0,
        errors: 0,
        buckets: new Array(LATENCY_BUCKETS.length + 1).fill(0),
      };
    }
    slot.calls++;
    const failed = outcome !== "ok" && outcome !== "tool_error" && outcome !== "refused";
    if (failed) {
      slot.errors++;
      this.#failures.set(server, {
        at: now,
        outcome,
        ...(errorCode !== undefined && { errorCode }),
      });
    }
    this.#last.set(server, Math.max(now, this.#last.get(server) ?? now));
    const seconds = durationMs / 1000;
    let bucket = 0;
    while (bucket < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[bucket]) bucket++;
    slot.buckets[bucket]++;
  }

  /** The last WINDOW_MINUTES minutes of `server`, oldest first, ending with the current one. */
  series(server: string, now: number): MinuteReading[] {
    const current = Math.floor(now / MINUTE_MS);
    const slots = this.#servers.get(server) ?? [];
    const out: MinuteReading[] = [];
    for (let minute = current - WINDOW_MINUTES + 1; minute <= current; minute++) {
      const slot = slots[minute % WINDOW_MINUTES];
      if (!slot || slot.minute !== minute || slot.calls === 0) {
        out.push({ at: minute * MINUTE_MS, calls: 0, errors: 0 });
        continue;
      }
      out.push({
        at: minute * MINUTE_MS,
        calls: slot.calls,
        errors: slot.errors,
        p50: quantile(slot.buckets, slot.calls, 0.5),
        p99: quantile(slot.buckets, slot.calls, 0.99),
      });
    }
    return out;
  }

  lastFailure(server: string): LastFailure | undefined {
    return this.#failures.get(server);
  }

  /** When `server` last had a call recorded here. */
  lastCall(server: string): number | undefined {
    return this.#last.get(server);
  }
}

/**
 * The upper bound of the bucket holding the q-quantile (as Prometheus' histogram_quantile
 * would, without interpolation): a figure never lower than the truth, in bucket steps.
 */
export function quantile(buckets: number[], total: number, q: number): number {
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let i = 0; i < buckets.length; i++) {
    seen += buckets[i];
    if (seen >= rank) return i < LATENCY_BUCKETS.length ? LATENCY_BUCKETS[i] : Infinity;
  }
  return Infinity;
}
