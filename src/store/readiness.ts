/**
 * Whether the storage answers now, for `/ready` (a load balancer's probe). Unlike /health, which
 * reports the last operation's outcome and stays 200, this asks the storage itself: one read of a
 * key never written, through the watched store (so a success also tells the monitor it is back).
 * Probes arriving together share one read, an answer is reused for a second (a balancer probing
 * every replica often costs the database one read a second each), and a read that does not come
 * back within READY_WAIT_MS counts as down, so the probe never hangs on a lost connection.
 */
import type { Clock, Timer } from "../core/clock.ts";
import { KEYS } from "./keys.ts";
import type { Store } from "./store.ts";

export const READY_WAIT_MS = 2_000;
const REUSE_MS = 1_000;

export class Readiness {
  #last?: { at: number; up: boolean };
  #inFlight?: Promise<boolean>;

  constructor(private readonly store: Store, private readonly clock: Clock) {}

  /** True when the storage answered a read just now (or within the last second). */
  async check(): Promise<boolean> {
    const now = this.clock.now();
    if (this.#last && now - this.#last.at < REUSE_MS) return this.#last.up;
    this.#inFlight ??= this.#probe().finally(() => this.#inFlight = undefined);
    return await this.#inFlight;
  }

  async #probe(): Promise<boolean> {
    let timer: Timer | undefined;
    const late = new Promise<boolean>((resolve) => {
      timer = this.clock.setTimeout(() => resolve(false), READY_WAIT_MS);
    });
    const read = this.store.get(KEYS.readinessProbe).then(() => true, () => false);
    const up = await Promise.race([read, late]);
    timer?.clear();
    this.#last = { at: this.clock.now(), up };
    return up;
  }
}
