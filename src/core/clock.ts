/**
 * Time, injected: the wall clock and the timers that measure gateway time (request timeouts,
 * idle reaping, keep-alives, expiry). Nothing in src/ reads `Date.now()` or starts such a timer
 * except through a `Clock`, so a test can freeze and advance all of it at once
 * (tests/fixtures/clock.ts) instead of sleeping.
 *
 * Pauses that only yield or space out retries (a backoff between two storage commits, a
 * restart pause) are not gateway time and may use the platform's timers directly.
 */
export interface Timer {
  /** Stops the timer; clearing a fired or cleared timer does nothing. */
  clear(): void;
}

export interface TimerOptions {
  /** Lets the process exit while this timer waits (for housekeeping timers). */
  unref?: boolean;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `fire` once, `ms` from now on this clock. */
  setTimeout(fire: () => void, ms: number, options?: TimerOptions): Timer;
  /** Calls `fire` every `ms` on this clock until cleared. */
  setInterval(fire: () => void, ms: number, options?: TimerOptions): Timer;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fire, ms, options) {
    const id = setTimeout(fire, ms);
    if (options?.unref) Deno.unrefTimer(id);
    return { clear: () => clearTimeout(id) };
  },
  setInterval(fire, ms, options) {
    const id = setInterval(fire, ms);
    if (options?.unref) Deno.unrefTimer(id);
    return { clear: () => clearInterval(id) };
  },
};

/**
 * Waits for `promise` but no longer than `ms` on `clock`: its value, or undefined when it
 * failed or the time ran out first. The timer is cleared either way.
 */
export async function waitAtMost<T>(
  clock: Clock,
  ms: number,
  promise: Promise<T>,
): Promise<T | undefined> {
  let timer: Timer | undefined;
  try {
    return await Promise.race([
      promise.catch(() => undefined),
      new Promise<undefined>((resolve) => timer = clock.setTimeout(() => resolve(undefined), ms)),
    ]);
  } finally {
    timer?.clear();
  }
}
