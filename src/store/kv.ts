/**
 * The `Store` on Deno KV: a local file, ":memory:", or a KV Connect URL. Two processes sharing
 * one file see "database is locked" now and then, so every commit is retried a bounded number
 * of times with a short random back-off.
 */
import { type Clock, systemClock } from "../core/clock.ts";
import type { Store, StoreCheck, StoreEntry, StoreKey, StoreWrite } from "./store.ts";

const COMMIT_ATTEMPTS = 8;
/** Deno KV is told to keep a record this much longer than its expiresAt (see #expiry). */
export const EXPIRY_SLACK_MS = 60_000;

/** Hears of a storage file whose mode could not be made private (not ours, say); it is still used. */
export type StorageWarning = (message: string, fields: Record<string, unknown>) => void;

export interface KvStoreOptions {
  warn?: StorageWarning;
  /** The clock records' `expiresAt` is reckoned on; the system's when left out. */
  clock?: Clock;
}

export async function openKvStore(path: string, options: KvStoreOptions = {}): Promise<Store> {
  const warn = options.warn ?? (() => {});
  const local = path !== ":memory:" && !/^https?:\/\//.test(path);
  if (local) await prepareLocalFile(path, warn);
  const kv = await Deno.openKv(path);
  if (local) await tightenModes(COMPANIONS.map((suffix) => path + suffix), warn);
  return new KvStore(kv, options.clock ?? systemClock);
}

/** SQLite's write-ahead log and shared-memory index beside the database file. */
const COMPANIONS = ["", "-wal", "-shm"];

/**
 * The KV file holds the generated master secret, people's sealed credentials and their grants.
 * Outside the shipped systemd unit (UMask=0077) a umask of 022 would leave it readable by every
 * local user. `Deno.umask` needs --allow-sys, which the compiled binary is not given, so the
 * modes are set on the files instead: a directory created here is 0700; the database file is
 * created 0600 before SQLite opens it, and SQLite gives its -wal and -shm files the database
 * file's mode, so no byte is ever written to a file others can open. Existing files lose their
 * group and other bits and gain none; an existing directory (it may be /var/lib) is left alone.
 */
async function prepareLocalFile(path: string, warn: StorageWarning): Promise<void> {
  const dir = path.replace(/[^/]*$/, "");
  if (dir) await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  try {
    await Deno.writeFile(path, new Uint8Array(), { createNew: true, mode: 0o600 });
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
  }
  await tightenModes(COMPANIONS.map((suffix) => path + suffix), warn);
}

async function tightenModes(files: string[], warn: StorageWarning): Promise<void> {
  if (Deno.build.os === "windows") return;
  for (const file of files) {
    let mode: number | null;
    try {
      mode = (await Deno.stat(file)).mode;
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) continue;
      throw error;
    }
    if (mode === null || (mode & 0o077) === 0) continue;
    try {
      await Deno.chmod(file, mode & 0o7700);
    } catch (error) {
      warn("the storage file is readable by other users and its mode could not be changed", {
        file,
        mode: (mode & 0o777).toString(8),
        hint: "chmod 600 it as its owner, or run Gatehouse as the file's owner",
        error,
      });
    }
  }
}

class KvStore implements Store {
  constructor(private readonly kv: Deno.Kv, private readonly clock: Clock) {}

  async get<T>(key: StoreKey): Promise<T | undefined> {
    const entry = await retryLocked(() => this.kv.get<T>(key as Deno.KvKey));
    return entry.value ?? undefined;
  }

  async getEntry<T>(key: StoreKey): Promise<StoreEntry<T>> {
    const entry = await retryLocked(() => this.kv.get<T>(key as Deno.KvKey));
    return { key, value: entry.value ?? undefined, version: entry.versionstamp };
  }

  async set<T>(key: StoreKey, value: T, expiresAt?: number): Promise<void> {
    await retryLocked(() => this.kv.set(key as Deno.KvKey, value, this.#expiry(expiresAt)));
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
          operation.set(write.key as Deno.KvKey, write.value, this.#expiry(write.expiresAt));
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
        operation.set(write.key as Deno.KvKey, write.value, this.#expiry(write.expiresAt));
      }
      return operation.commit();
    });
    return result.ok;
  }

  async delete(key: StoreKey): Promise<void> {
    await retryLocked(() => this.kv.delete(key as Deno.KvKey));
  }

  async list<T>(prefix: StoreKey, limit?: number): Promise<StoreEntry<T>[]> {
    return await retryLocked(async () => {
      const found: StoreEntry<T>[] = [];
      for await (const entry of this.kv.list<T>({ prefix: prefix as Deno.KvKey }, { limit })) {
        found.push({ key: entry.key as StoreKey, value: entry.value, version: entry.versionstamp });
      }
      return found;
    });
  }

  close(): void {
    this.kv.close();
  }

  /**
   * Deno KV's `expireIn` for a record that lapses at `expiresAt` on the gateway's clock. It only
   * tidies up (deletion is lazy and late), so it is given a minute of slack; correctness comes
   * from readers' checks.
   */
  #expiry(expiresAt: number | undefined): { expireIn: number } | undefined {
    if (expiresAt === undefined) return undefined;
    return { expireIn: Math.max(1_000, expiresAt - this.clock.now() + EXPIRY_SLACK_MS) };
  }
}

async function retryLocked<T>(operation: () => Promise<T>): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await operation();
    } catch (error) {
      const locked = String(error).includes("database is locked");
      if (!locked || attempt >= COMMIT_ATTEMPTS) throw error;
      // A platform timer: a back-off between two commits, not gateway time.
      await new Promise((resolve) => setTimeout(resolve, 5 * attempt + Math.random() * 20));
    }
  }
}
