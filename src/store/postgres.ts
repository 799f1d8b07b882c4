/**
 * The `Store` on PostgreSQL (`storage: postgres://…`), for replicas that share state through a
 * database their company already runs. Same semantics as kv.ts, held by one contract suite
 * (tests/store_contract_test.ts):
 *   - a key is record_codec.ts's order-preserving bytes, so `list` is a range scan in key order;
 *   - a version is random per write, so a key deleted and written again never looks unchanged;
 *   - every write of several records is one SERIALIZABLE transaction, tried again when the
 *     engine reports a conflict (40001): two writers on one read, exactly one commits;
 *   - a record past its `expiresAt` (on the gateway's clock) is absent to every reader and
 *     swept in the background (postgres_sweep.ts).
 * Only plain tables, INSERT … ON CONFLICT and transactions, so CockroachDB and YugabyteDB take
 * the same statements; every value reaches the server as a parameter.
 */
import postgres, { type Sql, type TransactionSql } from "postgres";
import { type Clock, systemClock } from "../core/clock.ts";
import { showStorage } from "../core/storage_url.ts";
import {
  clientOptions,
  DEFAULT_SETTINGS,
  describeFailure,
  isUnavailable,
  type PostgresSettings,
} from "./postgres_connection.ts";
import { migrate } from "./postgres_schema.ts";
import { startSweep, type Sweep } from "./postgres_sweep.ts";
import { decodeKey, decodeValue, encodeKey, encodeValue, prefixEnd } from "./record_codec.ts";
import {
  StorageUnavailableError,
  type Store,
  type StoreCheck,
  type StoreEntry,
  type StoreKey,
  type StoreWrite,
} from "./store.ts";

/** Conflicts a transaction is tried again on: serialization failure, deadlock, a racing insert. */
const RETRY_STATES = new Set(["40001", "40P01", "23505"]);
const TRANSACTION_ATTEMPTS = 12;

export interface PostgresStoreOptions extends Partial<PostgresSettings> {
  clock?: Clock;
  /** This replica's name: who holds the sweep's lease. */
  holder?: string;
  /** Sweeps expired records in the background (default true; commands that only copy say no). */
  sweep?: boolean;
  /** How often the sweep runs (a minute when left out). */
  sweepEveryMs?: number;
  /** Hears of a sweep that failed (the database away); it is tried again on the next round. */
  onSweepError?: (error: unknown) => void;
}

/**
 * Connects, brings the schema up to date and returns the store; throws a
 * StorageUnavailableError naming the database (never its password) when it cannot be reached
 * within the connect timeout.
 */
export async function openPostgresStore(
  storage: string,
  options: PostgresStoreOptions = {},
): Promise<PostgresStore> {
  const settings: PostgresSettings = {
    pool: options.pool ?? DEFAULT_SETTINGS.pool,
    connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_SETTINGS.connectTimeoutMs,
    statementTimeoutMs: options.statementTimeoutMs ?? DEFAULT_SETTINGS.statementTimeoutMs,
    ca: options.ca,
  };
  const { url, options: client } = clientOptions(storage, settings);
  const sql = postgres(url, client);
  const clock = options.clock ?? systemClock;
  try {
    await migrate(sql, () => clock.now());
  } catch (error) {
    await sql.end({ timeout: 1 }).catch(() => {});
    const why = describeFailure(error, storage);
    if (isUnavailable(error)) throw new StorageUnavailableError(`cannot reach ${why}`);
    throw new Error(`cannot prepare ${why}`);
  }
  const store = new PostgresStore(sql, clock, storage, settings);
  if (options.sweep !== false) {
    store.sweeper = startSweep(sql, clock, options.holder ?? crypto.randomUUID(), {
      onError: options.onSweepError,
      everyMs: options.sweepEveryMs,
    });
  }
  return store;
}

type Row = { key: Uint8Array; value: Uint8Array; version: string };

export class PostgresStore implements Store {
  sweeper?: Sweep;

  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
    private readonly storage: string,
    private readonly settings: PostgresSettings,
  ) {}

  /** Where this store keeps its records, fit to print. */
  get name(): string {
    return showStorage(this.storage);
  }

  get<T>(key: StoreKey): Promise<T | undefined> {
    return this.#read(async (sql) => {
      const rows = await sql<Row[]>`
        SELECT value FROM gatehouse_records
        WHERE key = ${encodeKey(key)} AND (expires_at IS NULL OR expires_at > ${this.clock.now()})`;
      return rows.length ? decodeValue<T>(rows[0].value) : undefined;
    });
  }

  getEntry<T>(key: StoreKey): Promise<StoreEntry<T>> {
    return this.#read(async (sql) => {
      const rows = await sql<Row[]>`
        SELECT value, version FROM gatehouse_records
        WHERE key = ${encodeKey(key)} AND (expires_at IS NULL OR expires_at > ${this.clock.now()})`;
      if (rows.length === 0) return { key, value: undefined, version: null };
      return { key, value: decodeValue<T>(rows[0].value), version: rows[0].version };
    });
  }

  set<T>(key: StoreKey, value: T, expiresAt?: number): Promise<void> {
    return this.#write((sql) => upsert(sql, { key, value, expiresAt }));
  }

  setIfAbsent<T>(key: StoreKey, value: T): Promise<T> {
    const bytes = encodeKey(key);
    const encoded = encodeValue(value);
    return this.#write(async (sql) => {
      for (let attempt = 0; attempt < TRANSACTION_ATTEMPTS; attempt++) {
        const now = this.clock.now();
        // An expired record counts as absent: it is replaced as if it were not there.
        const won = await sql`
          INSERT INTO gatehouse_records (key, value, version, expires_at)
          VALUES (${bytes}, ${encoded}, ${newVersion()}, NULL)
          ON CONFLICT (key) DO UPDATE
            SET value = excluded.value, version = excluded.version, expires_at = NULL
            WHERE gatehouse_records.expires_at IS NOT NULL
              AND gatehouse_records.expires_at <= ${now}
          RETURNING version`;
        if (won.length) return value;
        const existing = await sql<Row[]>`
          SELECT value FROM gatehouse_records
          WHERE key = ${bytes} AND (expires_at IS NULL OR expires_at > ${now})`;
        if (existing.length) return decodeValue<T>(existing[0].value);
      }
      throw new Error(
        `storage: could not write ${key.join("/")} after ${TRANSACTION_ATTEMPTS} attempts`,
      );
    });
  }

  consume<T>(key: StoreKey): Promise<T | undefined> {
    return this.#write(async (sql) => {
      // One statement: the row lock lets one DELETE return the row, the others find none.
      const rows = await sql<(Row & { live: boolean })[]>`
        DELETE FROM gatehouse_records WHERE key = ${encodeKey(key)}
        RETURNING value, (expires_at IS NULL OR expires_at > ${this.clock.now()}) AS live`;
      return rows.length && rows[0].live ? decodeValue<T>(rows[0].value) : undefined;
    });
  }

  consumeAndWrite<T>(key: StoreKey, writes: StoreWrite[]): Promise<T | undefined> {
    if (writes.length === 0) return this.consume<T>(key);
    const bytes = encodeKey(key);
    return this.#transaction(async (tx) => {
      const rows = await tx<(Row & { live: boolean })[]>`
        DELETE FROM gatehouse_records WHERE key = ${bytes}
        RETURNING value, (expires_at IS NULL OR expires_at > ${this.clock.now()}) AS live`;
      if (rows.length === 0 || !rows[0].live) return undefined;
      for (const write of writes) await upsert(tx, write);
      return decodeValue<T>(rows[0].value);
    });
  }

  commitIfUnchanged(
    checks: StoreCheck[],
    changes: { writes?: StoreWrite[]; deletes?: StoreKey[] },
  ): Promise<boolean> {
    return this.#transaction(async (tx) => {
      const now = this.clock.now();
      for (const check of checks) {
        const rows = await tx<{ version: string }[]>`
          SELECT version FROM gatehouse_records
          WHERE key = ${encodeKey(check.key)} AND (expires_at IS NULL OR expires_at > ${now})`;
        if ((rows[0]?.version ?? null) !== check.version) return false;
      }
      for (const key of changes.deletes ?? []) {
        await tx`DELETE FROM gatehouse_records WHERE key = ${encodeKey(key)}`;
      }
      for (const write of changes.writes ?? []) await upsert(tx, write);
      return true;
    });
  }

  delete(key: StoreKey): Promise<void> {
    return this.#write(async (sql) => {
      await sql`DELETE FROM gatehouse_records WHERE key = ${encodeKey(key)}`;
    });
  }

  list<T>(prefix: StoreKey, limit?: number): Promise<StoreEntry<T>[]> {
    const start = encodeKey(prefix);
    const end = prefixEnd(start);
    return this.#read(async (sql) => {
      const now = this.clock.now();
      const rows = limit === undefined
        ? await sql<Row[]>`
          SELECT key, value, version FROM gatehouse_records
          WHERE key > ${start} AND key < ${end} AND (expires_at IS NULL OR expires_at > ${now})
          ORDER BY key`
        : await sql<Row[]>`
          SELECT key, value, version FROM gatehouse_records
          WHERE key > ${start} AND key < ${end} AND (expires_at IS NULL OR expires_at > ${now})
          ORDER BY key LIMIT ${limit}`;
      return rows.map((row) => ({
        key: decodeKey(row.key),
        value: decodeValue<T>(row.value),
        version: row.version,
      }));
    });
  }

  /** Deletes expired records now (the background sweep's work); how many. For tests and tools. */
  async sweepExpired(): Promise<number> {
    return await this.sweeper?.once() ?? 0;
  }

  /** Every record, in key order, `batch` at a time: `gatehouse storage copy` reads with it. */
  async *records(batch = 500): AsyncGenerator<StoreEntry<unknown> & { expiresAt?: number }> {
    let after: Uint8Array = new Uint8Array();
    for (;;) {
      const rows = await this.#read((sql) =>
        sql<(Row & { expires_at: string | null })[]>`
          SELECT key, value, version, expires_at FROM gatehouse_records
          WHERE key > ${after} ORDER BY key LIMIT ${batch}`
      );
      for (const row of rows) {
        yield {
          key: decodeKey(row.key),
          value: decodeValue(row.value),
          version: row.version,
          expiresAt: row.expires_at === null ? undefined : Number(row.expires_at),
        };
      }
      if (rows.length < batch) return;
      after = rows[rows.length - 1].key;
    }
  }

  close(): void {
    this.sweeper?.stop();
    void this.sql.end({ timeout: 5 }).catch(() => {});
  }

  /** Ends every connection and waits for it (tests, and commands that exit next). */
  async closed(): Promise<void> {
    this.sweeper?.stop();
    await this.sql.end({ timeout: 5 });
  }

  /** Reads, bounded; pipelined behind other statements, since a read sent late changes nothing. */
  #read<T>(operation: (sql: Sql) => Promise<T>): Promise<T> {
    return this.#bounded(() => operation(this.sql));
  }

  /**
   * Writes on a connection of their own, bounded as #bounded says. The client would otherwise
   * pipeline them onto a connection busy with another statement, sent at once and run whenever
   * that one ends, even after the caller was answered; here a write not yet sent by then never is.
   */
  #write<T>(operation: (sql: Sql) => Promise<T>): Promise<T> {
    return this.#bounded(async (live) => {
      const reserved = await this.sql.reserve();
      try {
        // The caller was told it failed while this waited for a connection: nothing is sent.
        if (!live()) throw new Error("storage: abandoned after its caller's timeout");
        return await operation(reserved);
      } finally {
        reserved.release();
      }
    });
  }

  /**
   * Runs one operation, bounded: a failure to reach the database becomes a
   * StorageUnavailableError (503 with Retry-After to the caller), and a call the server does not
   * answer (its network gone, so its statement timeout cannot fire) gives up a second after it.
   * `live()` turns false once the caller has been told so: from then on the operation must not
   * start anything (a write made after its caller heard "failed" would surprise it: a refresh
   * token spent whose successor nobody received).
   */
  async #bounded<T>(operation: (live: () => boolean) => Promise<T>): Promise<T> {
    let timer: { clear(): void } | undefined;
    let abandoned = false;
    const limit = this.settings.statementTimeoutMs + this.settings.connectTimeoutMs + 1_000;
    try {
      return await Promise.race([
        operation(() => !abandoned),
        new Promise<never>((_, reject) => {
          timer = this.clock.setTimeout(
            () => {
              abandoned = true;
              reject(Object.assign(new Error("no answer in time"), { code: "ETIMEDOUT" }));
            },
            limit,
            { unref: true },
          );
        }),
      ]);
    } catch (error) {
      if (error instanceof StorageUnavailableError) throw error;
      if (isUnavailable(error)) {
        throw new StorageUnavailableError("the gateway's storage cannot be reached now", {
          detail: `storage unavailable: ${describeFailure(error, this.storage)}`,
        });
      }
      throw error;
    } finally {
      timer?.clear();
    }
  }

  /** `work` in one SERIALIZABLE transaction, run again (from its reads) on a conflict. */
  #transaction<T>(work: (tx: TransactionSql) => Promise<T>): Promise<T> {
    return this.#bounded(async (live) => {
      for (let attempt = 1;; attempt++) {
        try {
          return await this.sql.begin("isolation level serializable", (tx) => {
            // Its caller was told it failed while it waited for a connection: it rolls back.
            if (!live()) throw new Error("storage: abandoned after its caller's timeout");
            return work(tx);
          }) as T;
        } catch (error) {
          const code = String((error as { code?: unknown })?.code ?? "");
          if (!RETRY_STATES.has(code) || attempt >= TRANSACTION_ATTEMPTS) throw error;
          // A platform timer: spaces out retries of one commit, not gateway time.
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 2 * attempt));
        }
      }
    });
  }
}

async function upsert(sql: Sql | TransactionSql, write: StoreWrite): Promise<void> {
  await sql`
    INSERT INTO gatehouse_records (key, value, version, expires_at)
    VALUES (${encodeKey(write.key)}, ${encodeValue(write.value)}, ${newVersion()},
      ${write.expiresAt ?? null})
    ON CONFLICT (key) DO UPDATE
      SET value = excluded.value, version = excluded.version, expires_at = excluded.expires_at`;
}

/** 96 random bits: no two writes share a version, so a version read proves nothing moved since. */
function newVersion(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
