/**
 * Coarse timeouts, many at a time, on one interval timer. Every request through the gateway
 * has a timeout that almost never fires; a `setTimeout` per request cost more than the rest
 * of the session's bookkeeping. A deadline here fires within `resolutionMs` after it is due
 * (never before), and setting or cancelling one is a Map and a Set operation. Time is the
 * injected clock's, so a test moves request timeouts with the rest of the gateway's time.
 */
import type { Clock, Timer } from "./clock.ts";

export interface Deadline {
  readonly bucket: number;
  readonly fire: () => void;
}

export class Deadlines {
  readonly #buckets = new Map<number, Set<Deadline>>();
  #timer?: Timer;
  /** The last bucket whose deadlines have fired. */
  #done = 0;

  /** `clock` is the time the deadlines run on; timers kept beside them use it too. */
  constructor(readonly clock: Clock, readonly resolutionMs = 50) {}

  /** Calls `fire` once, `ms` from now (rounded up to the resolution), unless cancelled. */
  add(ms: number, fire: () => void): Deadline {
    const bucket = Math.ceil((this.clock.now() + ms) / this.resolutionMs);
    const deadline = { bucket, fire };
    let set = this.#buckets.get(bucket);
    if (!set) this.#buckets.set(bucket, set = new Set());
    set.add(deadline);
    if (!this.#timer) {
      this.#done = Math.floor(this.clock.now() / this.resolutionMs);
      this.#timer = this.clock.setInterval(() => this.#tick(), this.resolutionMs);
    }
    return deadline;
  }

  cancel(deadline: Deadline | undefined): void {
    if (!deadline) return;
    const set = this.#buckets.get(deadline.bucket);
    if (set?.delete(deadline) && set.size === 0) this.#buckets.delete(deadline.bucket);
  }

  /** Whether the interval timer runs (it stops an idle tick after the last deadline). */
  get ticking(): boolean {
    return this.#timer !== undefined;
  }

  /** Deadlines not yet fired nor cancelled. */
  get size(): number {
    let count = 0;
    for (const set of this.#buckets.values()) count += set.size;
    return count;
  }

  #tick(): void {
    const now = Math.floor(this.clock.now() / this.resolutionMs);
    // The timer stays on while there is work, and one idle tick more, so a steady trickle of
    // requests does not start and stop it each time.
    if (this.#buckets.size === 0) {
      this.#timer?.clear();
      this.#timer = undefined;
      return;
    }
    for (let bucket = this.#done + 1; bucket <= now; bucket++) {
      const due = this.#buckets.get(bucket);
      if (!due) continue;
      this.#buckets.delete(bucket);
      for (const deadline of due) {
        try {
          deadline.fire();
        } catch (error) {
          queueMicrotask(() => {
            throw error;
          });
        }
      }
    }
    this.#done = now;
  }
}
