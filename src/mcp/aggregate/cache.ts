/**
 * The aggregate's discovery cache: each member's lists (tools, prompts, resources, templates)
 * kept for `ttlMs`, shared by every session of the aggregate unless the member's answer depends
 * on the person (then the key holds the person). Concurrent misses for one key wait on a single
 * discovery; failures are not cached, so a member that comes back is seen at once.
 */
import type { Clock } from "../../core/clock.ts";

export interface CacheStats {
  hits: number;
  misses: number;
  /** Discoveries actually run (after collapsing concurrent misses). */
  loads: number;
}

export class DiscoveryCache {
  readonly #entries = new Map<string, { value: unknown; until: number }>();
  readonly #loading = new Map<string, Promise<unknown>>();
  readonly #listeners = new Set<(member: string, kinds: string[]) => void>();
  readonly stats: CacheStats = { hits: 0, misses: 0, loads: 0 };

  constructor(private readonly ttlMs: number, private readonly clock: Clock) {}

  static key(member: string, kind: string, scope: string): string {
    return `${member}\u0000${kind}\u0000${scope}`;
  }

  async get<T>(key: string, load: () => Promise<T>): Promise<T> {
    const entry = this.#entries.get(key);
    if (entry && entry.until > this.clock.now()) {
      this.stats.hits++;
      return entry.value as T;
    }
    this.stats.misses++;
    const running = this.#loading.get(key);
    if (running) return await (running as Promise<T>);
    this.stats.loads++;
    const loading = load().then((value) => {
      this.#entries.set(key, { value, until: this.clock.now() + this.ttlMs });
      return value;
    }).finally(() => this.#loading.delete(key));
    this.#loading.set(key, loading);
    return await loading;
  }

  /** Drops every scope of some of one member's lists, and tells each listening session once. */
  invalidate(member: string, kinds: string[]): void {
    for (const kind of kinds) {
      const prefix = `${member}\u0000${kind}\u0000`;
      for (const key of this.#entries.keys()) {
        if (key.startsWith(prefix)) this.#entries.delete(key);
      }
    }
    for (const listener of this.#listeners) listener(member, kinds);
  }

  /** Called on every invalidation; returns the function that stops listening. */
  onInvalidate(listener: (member: string, kinds: string[]) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
