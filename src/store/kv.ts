/**
 * The `Store` on Deno KV: a local file, ":memory:", or a KV Connect URL. Two processes sharing
 * one file see "database is locked" now and then, so every commit is retried a bounded number
 * of times with a short random back-off.
 */
import type { Store, StoreCheck, StoreEntry, StoreKey, StoreWrite } from "./store.ts";

const COMMIT_ATTEMPTS = 8;

export async function openKvStore(path: string): Promise<Store> {
  if (path !== ":memory:" && !/^https?:\/\//.test(path)) {
    const dir = path.replace(/[^/]*$/, "");
    if (dir) await Deno.mkdir(dir, { recursive: true });
  }
  const kv = await Deno.openKv(path);
  return new KvStore(kv);
}

class KvStore implements Store {
  constructor(private readonly kv: Deno.Kv) {}

  async get<T>(key: StoreKey): Promise<T | undefined> {
    const entry = await retryLocked(() => this.kv.get<T>(key as Deno.KvKey));
    return entry.value ?? undefined;
  }

  async getEntry<T>(key: StoreKey): Promise<StoreEntry<T>> {
    const entry = await retryLocked(() => this.kv.get<T>(key as Deno.KvKey));
    return { key, value: entry.value ?? undefined, version: entry.versionstamp };
  }

  async set<T>(key: StoreKey, value: T, expiresAt?: number): Promise<void> {
    await retryLocked(() => this.kv.set(key as Deno.KvKey, value, expiry(expiresAt)));
  }

  async setIfAbsent<T>(key: StoreKey, value: T): Promise<T> {
    for (let attempt = 0; attempt < COMMIT_ATTEMPTS; attempt++) {
      const result = await retryLocked(() =>
        this.kv.atomic().check({ key: key as Deno.KvKey, versionstamp: null })
          .set(key as Deno.KvKey, value).commit()
      );
      if (result.ok) return value;
      const existing = await this.get<T>(key);
      if (existing !== undefined) return existing;
    }
    throw new Error(`storage: could not write ${key.join("/")} after ${COMMIT_ATTEMPTS} attempts`);
  }

  consume<T>(key: StoreKey): Promise<T | undefined> {
    return this.consumeAndWrite<T>(key, []);
  }

  async consumeAndWrite<T>(key: StoreKey, writes: StoreWrite[]): Promise<T | undefined> {
    for (let attempt = 0; attempt < COMMIT_ATTEMPTS; attempt++) {
      const entry = await retryLocked(() => this.kv.get<T>(key as Deno.KvKey));
      if (entry.versionstamp === null) return undefined;
      const result = await retryLocked(() => {
        const operation = this.kv.atomic().check(entry).delete(key as Deno.KvKey);
        for (const write of writes) {
          operation.set(write.key as Deno.KvKey, write.value, expiry(write.expiresAt));
        }
        return operation.commit();
      });
      if (result.ok) return entry.value;
    }
    return undefined;
  }

  async commitIfUnchanged(
    checks: StoreCheck[],
    changes: { writes?: StoreWrite[]; deletes?: StoreKey[] },
  ): Promise<boolean> {
    const result = await retryLocked(() => {
      const operation = this.kv.atomic();
      for (const check of checks) {
        operation.check({ key: check.key as Deno.KvKey, versionstamp: check.version });
      }
      for (const key of changes.deletes ?? []) operation.delete(key as Deno.KvKey);
      for (const write of changes.writes ?? []) {
        operation.set(write.key as Deno.KvKey, write.value, expiry(write.expiresAt));
      }
      return operation.commit();
    });
    return result.ok;
  }

  async delete(key: StoreKey): Promise<void> {
    await retryLocked(() => this.kv.delete(key as Deno.KvKey));
  }

  close(): void {
    this.kv.close();
  }
}

/**
 * Deno KV's `expireIn` for a record that lapses at `expiresAt`. It only tidies up (deletion is
 * lazy and late), so it is given a minute of slack; correctness comes from readers' checks.
 */
function expiry(expiresAt: number | undefined): { expireIn: number } | undefined {
  if (expiresAt === undefined) return undefined;
  return { expireIn: Math.max(1_000, expiresAt - Date.now() + 60_000) };
}

async function retryLocked<T>(operation: () => Promise<T>): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await operation();
    } catch (error) {
      const locked = String(error).includes("database is locked");
      if (!locked || attempt >= COMMIT_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, 5 * attempt + Math.random() * 20));
    }
  }
}
