/**
 * `gatehouse storage copy --from SOURCE --to TARGET`: moves an installation from one storage to
 * another (a KV file to PostgreSQL when one machine grows into replicas), so nobody signs in
 * again. Every record is copied as it is stored: sealed values stay sealed, so the gateways on
 * the target need the same `secret:` (or the generated one, which is a record and comes along);
 * each record keeps its expiry. The target must be empty (two installations never mix), every
 * write only lands where the key is still absent, and the count is verified at the end.
 */
import type { Clock } from "../core/clock.ts";
import { isPostgresUrl, showStorage } from "../core/storage_url.ts";
import { kvExpirations } from "../store/kv_expirations.ts";
import { PostgresStore } from "../store/postgres.ts";
import { encodeKey } from "../store/record_codec.ts";
import type { Store, StoreKey } from "../store/store.ts";

export const STORAGE_USAGE = `Usage:
  gatehouse storage copy --from SOURCE --to TARGET
      copies every record of SOURCE into TARGET, which must be empty, and checks the count.
      SOURCE and TARGET are storage: values: a Deno KV file, or postgres://USER:PASSWORD@HOST/DB
      (a password may come from $PGPASSWORD instead). Stop the gateways on SOURCE first:
      what they write during the copy may be missed. The gateways on TARGET need the same
      secret: as those on SOURCE.

Exit codes: 0 copied and verified, 64 bad command line, 3 a storage failed or the count differs.`;

export interface StorageCommandDeps {
  /** Opens a storage: value (no background work); throws with a sentence saying why not. */
  openStore(storage: string): Promise<Store>;
  clock: Clock;
  out(line: string): void;
  err(line: string): void;
}

interface Copied {
  key: StoreKey;
  value: unknown;
  expiresAt?: number;
}

export async function runStorageCommand(args: string[], deps: StorageCommandDeps): Promise<number> {
  if (args[0] === "--help" || args[0] === "-h") {
    deps.out(STORAGE_USAGE);
    return 0;
  }
  const flags = new Map<string, string>();
  for (let i = 1; i < args.length; i++) {
    const [flag, inline] = args[i].includes("=") ? args[i].split(/=(.*)/s, 2) : [args[i]];
    const value = inline ?? args[++i];
    if ((flag !== "--from" && flag !== "--to") || value === undefined) {
      deps.err(`gatehouse storage: unknown or incomplete argument ${flag}\n\n${STORAGE_USAGE}`);
      return 64;
    }
    flags.set(flag, value);
  }
  const from = flags.get("--from");
  const to = flags.get("--to");
  if (args[0] !== "copy" || !from || !to) {
    deps.err(`gatehouse storage: say copy --from SOURCE --to TARGET\n\n${STORAGE_USAGE}`);
    return 64;
  }
  if (from === to) {
    deps.err("gatehouse storage copy: SOURCE and TARGET are the same storage");
    return 64;
  }
  const stores: Store[] = [];
  try {
    // Opening a KV path that is not there would make an empty one and copy nothing.
    if (!isPostgresUrl(from) && from !== ":memory:" && !/^https?:\/\//.test(from)) {
      await Deno.stat(from).catch(() => {
        throw new Error(`there is no storage file ${from}`);
      });
    }
    const source = await open(deps, from, stores);
    const target = await open(deps, to, stores);
    if ((await target.list([], 1)).length > 0) {
      // A copy cut short leaves a part behind: say how to start again from empty.
      const emptyIt = isPostgresUrl(to)
        ? "DROP TABLE gatehouse_records, gatehouse_leases, gatehouse_schema"
        : "delete the file with its -wal and -shm files";
      deps.err(
        `gatehouse storage copy: ${showStorage(to)} is not empty; copy into an empty database ` +
          `(two installations' records must not mix). If it holds only an interrupted copy, ` +
          `empty it (${emptyIt}) and copy again`,
      );
      return 3;
    }
    const records = await readAll(source, from);
    let written = 0;
    for (const record of records) {
      const landed = await target.commitIfUnchanged([{ key: record.key, version: null }], {
        writes: [record],
      });
      if (!landed) {
        deps.err(
          `gatehouse storage copy: ${showStorage(to)} was written meanwhile; stop its gateways`,
        );
        return 3;
      }
      written++;
    }
    const counted = (await target.list([])).length;
    // Records past their expiry are copied (with it); PostgreSQL no longer reads them, Deno KV
    // may for a while: either count is right.
    const now = deps.clock.now();
    const live = records.filter((r) => r.expiresAt === undefined || r.expiresAt > now);
    if (counted !== live.length && counted !== records.length) {
      deps.err(
        `gatehouse storage copy: ${
          showStorage(to)
        } holds ${counted} records, ${live.length} expected`,
      );
      return 3;
    }
    deps.out(
      `copied ${written} records from ${showStorage(from)} to ${showStorage(to)}; ${counted} ` +
        "readable there, as in the source",
    );
    return 0;
  } catch (error) {
    deps.err(`gatehouse storage copy: ${(error as Error).message}`);
    return 3;
  } finally {
    for (const store of stores) {
      if (store instanceof PostgresStore) await store.closed().catch(() => {});
      else store.close();
    }
  }
}

async function open(deps: StorageCommandDeps, storage: string, opened: Store[]): Promise<Store> {
  try {
    const store = await deps.openStore(storage);
    opened.push(store);
    return store;
  } catch (error) {
    throw new Error(`cannot open ${showStorage(storage)}: ${(error as Error).message}`);
  }
}

/** Every record of `store` with its expiry, where the engine keeps one apart from the value. */
async function readAll(store: Store, storage: string): Promise<Copied[]> {
  if (store instanceof PostgresStore) {
    const records: Copied[] = [];
    for await (const record of store.records()) records.push(record);
    return records;
  }
  const expirations = await kvExpirations(storage);
  return (await store.list([])).map((entry) => {
    const expiresAt = expirations.get(hex(encodeKey(entry.key)));
    return { key: entry.key, value: entry.value, ...(expiresAt ? { expiresAt } : {}) };
  });
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
