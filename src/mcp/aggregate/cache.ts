/**
 * The aggregate's discovery cache: each member's lists (tools, prompts, resources, templates)
 * kept for `ttlMs`, shared by every session of the aggregate unless the member's answer depends
 * on the person (then the key holds the person). Concurrent misses for one key wait on a single
 * discovery; failures are not cached, so a member that comes back is seen at once. A change
 * one person's member announces drops and tells only that person's scope: another person's
 * sessions would otherwise hear when alice added a note.
 */
import type { Clock } from "../../core/clock.ts";

export interface CacheStats {
  hits: number;
  misses: number;
  /** Discoveries actually run (after collapsing concurrent misses). */
  loads: number;
}

/** Lists kept at most by default: every member's four lists for a thousand kinds of client. */
const MAX_ENTRIES = 4_096;

/** Hears that `member`'s `kinds` lists changed for the sessions of `scope`. */
type Listener = (member: string, kinds: string[], scope: string) => void;

export class DiscoveryCache {
  readonly #entries = new Map<string, { value: unknown; until: number }>();
  readonly #loading = new Map<string, Promise<unknown>>();
  readonly #listeners = new Set<Listener>();
  readonly stats: CacheStats = { hits: 0, misses: 0, loads: 0 };

  constructor(
    private readonly ttlMs: number,
    private readonly clock: Clock,
    /**
     * Lists kept at most: each set of capabilities a client declares is a scope of its own, so
     * clients could otherwise add lists without end (an expired one is only replaced when its
     * key is asked for again).
     */
    private readonly maxEntries = MAX_ENTRIES,
  ) {}

  /** How many lists are kept. */
  get size(): number {
    return this.#entries.size;
  }

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
      this.#entries.delete(key);
      this.#makeRoom();
      this.#entries.set(key, { value, until: this.clock.now() + this.ttlMs });
      return value;
    }).finally(() => this.#loading.delete(key));
    this.#loading.set(key, loading);
    return await loading;
  }

  /** Below maxEntries: the expired lists go, then the oldest kept. */
  #makeRoom(): void {
    if (this.#entries.size < this.maxEntries) return;
    const now = this.clock.now();
    for (const [key, entry] of this.#entries) {
      if (entry.until <= now) this.#entries.delete(key);
    }
    for (const key of this.#entries.keys()) {
      if (this.#entries.size < this.maxEntries) break;
      this.#entries.delete(key);
    }
  }

  /**
   * Drops some of one member's lists in `scope` (the member's scope for the session that heard
   * of the change, as `scopeOf` gives it: "*" or one person's), and tells each listener; a
   * listener acts only on its own scope.
   */
  invalidate(member: string, kinds: string[], scope: string): void {
    for (const kind of kinds) {
      const prefix = `${member}\u0000${kind}\u0000`;
      for (const key of this.#entries.keys()) {
        if (!key.startsWith(prefix)) continue;
        // A discovery's scope may say more after a "|" (the client's capability kinds).
        const keyScope = key.slice(prefix.length);
        if (keyScope === scope || keyScope.startsWith(`${scope}|`)) this.#entries.delete(key);
      }
    }
    for (const listener of this.#listeners) listener(member, kinds, scope);
  }

  /** Called on every invalidation; returns the function that stops listening. */
  onInvalidate(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
