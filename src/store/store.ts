/** The storage interface the gateway depends on; `kv.ts` implements it on Deno KV. */

export type StoreKey = readonly (string | number)[];

export interface Store {
  get<T>(key: StoreKey): Promise<T | undefined>;
  /** Writes only if the key is absent; returns the value now stored (the winner's). */
  setIfAbsent<T>(key: StoreKey, value: T): Promise<T>;
  set<T>(key: StoreKey, value: T): Promise<void>;
  /** Atomically reads and deletes: at most one caller ever gets the value. */
  consume<T>(key: StoreKey): Promise<T | undefined>;
  delete(key: StoreKey): Promise<void>;
  close(): void;
}
