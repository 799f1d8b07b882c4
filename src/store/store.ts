/**
 * The storage interface the gateway depends on; `kv.ts` implements it on Deno KV and
 * `postgres.ts` on PostgreSQL, with the same semantics (tests/store_contract_test.ts).
 */
import { GatehouseError } from "../core/errors.ts";

/** A byte-array part is a digest standing for an identifier too long to keep (keys.ts). */
export type StoreKey = readonly (string | number | Uint8Array)[];

export interface StoreWrite {
  key: StoreKey;
  value: unknown;
  /** Epoch ms after which the record is garbage; readers still check their own expiresAt. */
  expiresAt?: number;
}

/**
 * A key as it was read: its value and an opaque version that changes on every write. `version`
 * is null (and `value` undefined) when the key held nothing.
 */
export interface StoreEntry<T> {
  key: StoreKey;
  value: T | undefined;
  version: string | null;
}

/** A condition of `commitIfUnchanged`: `key` still holds `version` (null: is still absent). */
export interface StoreCheck {
  key: StoreKey;
  version: string | null;
}

export interface Store {
  get<T>(key: StoreKey): Promise<T | undefined>;
  /** Reads a key with its version, for a later `commitIfUnchanged`. */
  getEntry<T>(key: StoreKey): Promise<StoreEntry<T>>;
  /** Writes only if the key is absent; returns the value now stored (the winner's). */
  setIfAbsent<T>(key: StoreKey, value: T): Promise<T>;
  /** Writes a value; with `expiresAt` the storage may drop it some time after that instant. */
  set<T>(key: StoreKey, value: T, expiresAt?: number): Promise<void>;
  /** Atomically reads and deletes: at most one caller ever gets the value. */
  consume<T>(key: StoreKey): Promise<T | undefined>;
  /**
   * Atomically consumes `key` and writes `writes`, all or nothing: when the key holds no value
   * nothing is written and the result is undefined. Rotation of one-time items uses this.
   */
  consumeAndWrite<T>(key: StoreKey, writes: StoreWrite[]): Promise<T | undefined>;
  /**
   * Atomically, all or nothing: when every key in `checks` still holds the version it was read
   * at, deletes `deletes`, writes `writes` and returns true; when any changed, changes nothing
   * and returns false. A decision made on several records commits only if none moved since.
   */
  commitIfUnchanged(
    checks: StoreCheck[],
    changes: { writes?: StoreWrite[]; deletes?: StoreKey[] },
  ): Promise<boolean>;
  delete(key: StoreKey): Promise<void>;
  /**
   * Every record whose key starts with `prefix`, in key order, at most `limit` of them (all when
   * left out). For indexes and small sets (revocations), never for a request's hot path.
   */
  list<T>(prefix: StoreKey, limit?: number): Promise<StoreEntry<T>[]>;
  close(): void;
}

/**
 * The storage cannot be reached now (a database down, restarting, or too slow to answer): the
 * request that needed it is answered 503 with Retry-After, and the process keeps running.
 */
export class StorageUnavailableError extends GatehouseError<"storage_unavailable"> {
  /** Seconds a client should wait before trying again. */
  readonly retryAfter = 5;
  /**
   * Why and where, for the operator's log: the engine's code and the database as showStorage
   * shows it. The message may reach a client (a call that needed storage), so it holds neither.
   */
  readonly detail: string;
  constructor(message: string, options?: ErrorOptions & { detail?: string }) {
    super("storage_unavailable", message, options);
    this.detail = options?.detail ?? message;
  }
}
