/** The storage interface the gateway depends on; `kv.ts` implements it on Deno KV. */

export type StoreKey = readonly (string | number)[];

export interface StoreWrite {
  key: StoreKey;
  value: unknown;
  /** Epoch ms after which the record is garbage; readers still check their own expiresAt. */
  expiresAt?: number;
}

export interface Store {
  get<T>(key: StoreKey): Promise<T | undefined>;
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
  delete(key: StoreKey): Promise<void>;
  close(): void;
}
