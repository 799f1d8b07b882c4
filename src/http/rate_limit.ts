/**
 * Token buckets per key (a person, a client, an address): `count` requests may come at once,
 * then they refill evenly over `perMs`. Kept in this process's memory; each replica limits
 * on its own. Idle buckets are forgotten, so hostile keys cannot grow the table without bound.
 */
import type { RateLimitConfig } from "../config/types.ts";
import type { Clock } from "../core/clock.ts";
import type { Rate } from "../core/units.ts";

interface Bucket {
  tokens: number;
  at: number;
}

/** Past this many keys, buckets that have refilled completely are dropped first. */
const MAX_KEYS = 100_000;

export class RateLimiter {
  readonly #buckets = new Map<string, Bucket>();

  constructor(readonly rate: Rate, private readonly clock: Clock) {}

  /** Takes one request for `key`: 0 when allowed, else the seconds until one is. */
  take(key: string): number {
    const now = this.clock.now();
    const bucket = this.#buckets.get(key);
    const tokens = this.#tokens(bucket, now);
    if (tokens < 1) {
      if (bucket) Object.assign(bucket, { tokens, at: now });
      return this.#secondsUntilOne(tokens);
    }
    if (bucket) {
      bucket.tokens = tokens - 1;
      bucket.at = now;
    } else {
      if (this.#buckets.size >= MAX_KEYS) this.#forgetIdle(now);
      this.#buckets.set(key, { tokens: tokens - 1, at: now });
    }
    return 0;
  }

  /** Like `take`, but only looks: 0 when a request for `key` would be allowed. */
  wait(key: string): number {
    const tokens = this.#tokens(this.#buckets.get(key), this.clock.now());
    return tokens < 1 ? this.#secondsUntilOne(tokens) : 0;
  }

  #tokens(bucket: Bucket | undefined, now: number): number {
    const { count, perMs } = this.rate;
    return bucket ? Math.min(count, bucket.tokens + (now - bucket.at) * count / perMs) : count;
  }

  #secondsUntilOne(tokens: number): number {
    const { count, perMs } = this.rate;
    return Math.max(1, Math.ceil(Math.round((1 - tokens) * perMs / count) / 1000));
  }

  get size(): number {
    return this.#buckets.size;
  }

  #forgetIdle(now: number): void {
    const { count, perMs } = this.rate;
    for (const [key, bucket] of this.#buckets) {
      if (bucket.tokens + (now - bucket.at) * count / perMs >= count) this.#buckets.delete(key);
    }
    // Everyone is busy: drop the oldest, which only ever loosens a limit.
    while (this.#buckets.size >= MAX_KEYS) {
      this.#buckets.delete(this.#buckets.keys().next().value!);
    }
  }
}

/** The configured limiters, by what they count. */
export class RateLimits {
  readonly #limiters = new Map<keyof RateLimitConfig, RateLimiter>();

  constructor(
    config: RateLimitConfig,
    clock: Clock,
    private readonly onLimited: (kind: keyof RateLimitConfig) => void = () => {},
  ) {
    for (const [kind, rate] of Object.entries(config) as [keyof RateLimitConfig, Rate][]) {
      this.#limiters.set(kind, new RateLimiter(rate, clock));
    }
  }

  /** 0 when `key` may go on under `kind`'s limit (or there is none), else seconds to wait. */
  take(kind: keyof RateLimitConfig, key: string): number {
    const wait = this.#limiters.get(kind)?.take(key) ?? 0;
    if (wait) this.onLimited(kind);
    return wait;
  }

  /** 0 when `key` may go on under `kind`'s limit, else seconds to wait; takes nothing. */
  wait(kind: keyof RateLimitConfig, key: string): number {
    const wait = this.#limiters.get(kind)?.wait(key) ?? 0;
    if (wait) this.onLimited(kind);
    return wait;
  }

  /**
   * Counts one event against `key` after the fact (a failed token request), refusing nothing:
   * the next `wait` tells whether more may come.
   */
  charge(kind: keyof RateLimitConfig, key: string): void {
    this.#limiters.get(kind)?.take(key);
  }

  /** The key a client is counted under: a metadata-document client (one URL shared by everyone
   * using that app) together with `who`, a registered client alone. */
  static clientKey(clientId: string, who: string): string {
    return clientId.startsWith("https:") ? `${clientId} ${who}` : clientId;
  }
}
