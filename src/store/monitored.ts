/**
 * Watches the storage from the gateway's side, whatever the engine: each operation's time and
 * failure (for /metrics), and whether the storage answers (for /health and the log). When it
 * stops answering the log says so at most once a second (with how many calls failed since), and
 * once, when it answers again, for how long it was away. Nothing here waits on the storage: a
 * call that needs none never passes through it.
 */
import type { Clock } from "../core/clock.ts";
import {
  StorageUnavailableError,
  type Store,
  type StoreCheck,
  type StoreKey,
  type StoreWrite,
} from "./store.ts";

export type StorageState = "up" | "down";

export interface StorageEvents {
  /** The storage failed to answer (at most once a second); `failures` since the last word. */
  down(fields: { error: string; failures: number }): void;
  /** It answers again after `downMs`. */
  back(fields: { downMs: number }): void;
}

interface OperationStats {
  calls: number;
  errors: number;
  seconds: number;
}

const OPERATIONS = [
  "get",
  "getEntry",
  "setIfAbsent",
  "set",
  "consume",
  "consumeAndWrite",
  "commitIfUnchanged",
  "delete",
  "list",
] as const;
type Operation = typeof OPERATIONS[number];

export class StorageMonitor {
  #state: StorageState = "up";
  #downSince = 0;
  #lastWord = -Infinity;
  #unsaid = 0;
  readonly stats = new Map<Operation, OperationStats>(
    OPERATIONS.map((op) => [op, { calls: 0, errors: 0, seconds: 0 }]),
  );

  constructor(private readonly clock: Clock, private readonly events: StorageEvents) {}

  get state(): StorageState {
    return this.#state;
  }

  succeeded(operation: Operation, seconds: number): void {
    const stats = this.stats.get(operation)!;
    stats.calls++;
    stats.seconds += seconds;
    if (this.#state === "down") {
      this.#state = "up";
      this.#unsaid = 0;
      this.#lastWord = -Infinity;
      this.events.back({ downMs: this.clock.now() - this.#downSince });
    }
  }

  failed(operation: Operation, seconds: number, error: unknown): void {
    const stats = this.stats.get(operation)!;
    stats.calls++;
    stats.errors++;
    stats.seconds += seconds;
    if (!(error instanceof StorageUnavailableError)) return;
    const now = this.clock.now();
    if (this.#state === "up") {
      this.#state = "down";
      this.#downSince = now;
    }
    this.#unsaid++;
    if (now - this.#lastWord < 1_000) return;
    this.#lastWord = now;
    this.events.down({ error: error.detail, failures: this.#unsaid });
    this.#unsaid = 0;
  }
}

/** `store`, with every operation timed and its outcome told to `monitor`. */
export function monitorStore(store: Store, monitor: StorageMonitor): Store {
  const watch = async <T>(operation: Operation, run: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      const result = await run();
      monitor.succeeded(operation, (performance.now() - started) / 1_000);
      return result;
    } catch (error) {
      monitor.failed(operation, (performance.now() - started) / 1_000, error);
      throw error;
    }
  };
  return {
    get: <T>(key: StoreKey) => watch("get", () => store.get<T>(key)),
    getEntry: <T>(key: StoreKey) => watch("getEntry", () => store.getEntry<T>(key)),
    setIfAbsent: <T>(key: StoreKey, value: T) =>
      watch("setIfAbsent", () => store.setIfAbsent(key, value)),
    set: <T>(key: StoreKey, value: T, expiresAt?: number) =>
      watch("set", () => store.set(key, value, expiresAt)),
    consume: <T>(key: StoreKey) => watch("consume", () => store.consume<T>(key)),
    consumeAndWrite: <T>(key: StoreKey, writes: StoreWrite[]) =>
      watch("consumeAndWrite", () => store.consumeAndWrite<T>(key, writes)),
    commitIfUnchanged: (
      checks: StoreCheck[],
      changes: { writes?: StoreWrite[]; deletes?: StoreKey[] },
    ) => watch("commitIfUnchanged", () => store.commitIfUnchanged(checks, changes)),
    delete: (key: StoreKey) => watch("delete", () => store.delete(key)),
    list: <T>(prefix: StoreKey, limit?: number) =>
      watch("list", () => store.list<T>(prefix, limit)),
    close: () => store.close(),
  };
}
