/**
 * Opens the storage `storage:` names: PostgreSQL for a postgres:// URL, Deno KV for anything
 * else (a file, ":memory:", a KV Connect URL). serve and the operator commands both open it here.
 */
import type { Clock } from "../core/clock.ts";
import { isPostgresUrl } from "../core/storage_url.ts";
import { openKvStore, type StorageWarning } from "./kv.ts";
import { openPostgresStore } from "./postgres.ts";
import type { Store } from "./store.ts";

export interface OpenStorageOptions {
  clock: Clock;
  /** PostgreSQL: connections kept at most, connect and statement timeout, a CA file. */
  pool?: number;
  timeoutMs?: number;
  caFile?: string;
  /** This replica's name, for the PostgreSQL sweep's lease. */
  holder?: string;
  /** Background sweeping of expired records (PostgreSQL; off for one-shot commands). */
  sweep?: boolean;
  warn?: StorageWarning;
}

export async function openStorage(storage: string, options: OpenStorageOptions): Promise<Store> {
  if (!isPostgresUrl(storage)) return await openKvStore(storage, options);
  let ca: string | undefined;
  if (options.caFile !== undefined) {
    try {
      ca = await Deno.readTextFile(options.caFile);
    } catch (error) {
      throw new Error(`cannot read storageCaFile ${options.caFile}: ${(error as Error).message}`);
    }
  }
  return await openPostgresStore(storage, {
    clock: options.clock,
    pool: options.pool,
    connectTimeoutMs: options.timeoutMs,
    statementTimeoutMs: options.timeoutMs,
    ca,
    holder: options.holder,
    sweep: options.sweep,
    onSweepError: (error) =>
      options.warn?.("the sweep of expired records failed; it runs again in a minute", { error }),
  });
}
