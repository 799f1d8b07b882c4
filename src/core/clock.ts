/** Time, injected so that tests of expiry can freeze it. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
