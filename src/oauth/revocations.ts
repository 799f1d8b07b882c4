/**
 * Which grants are revoked, as this replica knows it: an in-memory set that the token verifier
 * asks on every request without touching storage. Every `pollMs` the replica reads one small
 * record, the revocation epoch, which every revocation rewrites; only when its version moved
 * are the revocations listed again. So a grant revoked on any replica (or by the `gatehouse
 * grants` command, or a replay detected elsewhere) is refused here within `pollMs` plus one
 * listing, and here at once when it was revoked here (`noteRevoked`).
 *
 * Each revocation is kept as long as a token of its grant could still verify (access-token
 * lifetime plus the clock leeway); after that the signature check refuses such tokens anyway.
 */
import type { Clock, Timer } from "../core/clock.ts";
import { KEYS } from "../store/keys.ts";
import type { Store } from "../store/store.ts";
import type { RevocationRecord } from "./grant_records.ts";

/** How often each replica reads the revocation epoch: the bound on propagation, near enough. */
export const REVOCATION_POLL_MS = 2_000;

export type RevocationListener = (familyIds: string[]) => void;

export interface RevocationOptions {
  store: Store;
  clock: Clock;
  pollMs?: number;
  /** Told when a poll fails (storage unreachable); the last known set stays in force. */
  onError?: (error: unknown) => void;
}

export class Revocations {
  /** Revoked grant → when its revocation may be forgotten. */
  #revoked = new Map<string, number>();
  /** The epoch's version at the last listing; undefined before the first. */
  #epoch: string | null | undefined = undefined;
  readonly #listeners = new Set<RevocationListener>();
  #timer?: Timer;
  #polling?: Promise<void>;
  #closed = false;

  constructor(private readonly options: RevocationOptions) {}

  /** Reads the revocations once, then keeps them fresh every `pollMs` until `close`. */
  async start(): Promise<void> {
    await this.refresh();
    if (this.#closed || this.#timer) return;
    this.#timer = this.options.clock.setInterval(
      () => void this.refresh(),
      this.options.pollMs ?? REVOCATION_POLL_MS,
      { unref: true },
    );
  }

  /** True when the grant is revoked, as far as this replica knows (no storage read). */
  has(familyId: string): boolean {
    const until = this.#revoked.get(familyId);
    if (until === undefined) return false;
    if (until > this.options.clock.now()) return true;
    this.#revoked.delete(familyId);
    return false;
  }

  /** A revocation learned here (made here, or read from a family record): in force at once. */
  noteRevoked(familyId: string, until: number): void {
    const known = this.#revoked.get(familyId);
    this.#revoked.set(familyId, Math.max(known ?? 0, until));
    if (known === undefined || known <= this.options.clock.now()) this.#tell([familyId]);
  }

  /** Calls `listener` with grants newly known to be revoked; returns the unsubscribe. */
  onRevoked(listener: RevocationListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Reads the epoch and, when it moved, every revocation. One poll at a time: a call while one
   * runs waits for it.
   */
  refresh(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#polling ??= this.#poll().catch((error) => this.options.onError?.(error)).finally(() =>
      this.#polling = undefined
    );
    return this.#polling;
  }

  /** Stops polling; resolves once a poll under way has finished. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#timer?.clear();
    await this.#polling;
  }

  async #poll(): Promise<void> {
    const { store, clock } = this.options;
    // The epoch first: a revocation committed after this read moves it again, so the listing
    // below may miss it only if the next poll lists again.
    const epoch = await store.getEntry(KEYS.revocationEpoch);
    if (epoch.version === this.#epoch) return;
    const listed = await store.list<RevocationRecord>(KEYS.revocations);
    const now = clock.now();
    const fresh: string[] = [];
    for (const entry of listed) {
      const familyId = entry.key.at(-1);
      const until = entry.value?.expiresAt;
      if (typeof familyId !== "string" || typeof until !== "number" || until <= now) continue;
      const known = this.#revoked.get(familyId);
      if (known === undefined || known <= now) fresh.push(familyId);
      this.#revoked.set(familyId, Math.max(known ?? 0, until));
    }
    for (const [familyId, until] of this.#revoked) {
      if (until <= now) this.#revoked.delete(familyId);
    }
    this.#epoch = epoch.version;
    if (fresh.length) this.#tell(fresh);
  }

  #tell(familyIds: string[]): void {
    for (const listener of this.#listeners) {
      try {
        listener(familyIds);
      } catch (error) {
        this.options.onError?.(error);
      }
    }
  }
}
