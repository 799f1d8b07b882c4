/**
 * The held calls this process waits on, told when theirs is decided: a decision made here (the
 * page, on this replica) wakes its waiter at once; one made elsewhere (another replica, the CLI)
 * is read by polling the waiting records, as revocations are. A record whose time ran out reads
 * as expired (approval_records.ts), so polling also ends the waits that expire.
 */
import type { Clock, Timer } from "../../core/clock.ts";
import type { ApprovalRecord, ApprovalRecords } from "./approval_records.ts";

/** How often waiting records are read again. */
export const APPROVAL_POLL_MS = 500;

type Wake = (record: ApprovalRecord | undefined) => void;

export class ApprovalBoard {
  readonly #waiting = new Map<string, Set<Wake>>();
  #timer?: Timer;
  #polling = false;

  constructor(
    private readonly records: ApprovalRecords,
    private readonly clock: Clock,
    private readonly pollMs = APPROVAL_POLL_MS,
  ) {}

  /**
   * Resolves with `id`'s record once it is no longer pending (undefined: gone), or undefined
   * when `signal` aborts first (the client cancelled, the session ended).
   */
  wait(id: string, signal: AbortSignal): Promise<ApprovalRecord | undefined> {
    const { promise, resolve } = Promise.withResolvers<ApprovalRecord | undefined>();
    if (signal.aborted) return Promise.resolve(undefined);
    const wakes = this.#waiting.get(id) ?? new Set<Wake>();
    const wake: Wake = (record) => {
      wakes.delete(wake);
      if (wakes.size === 0) this.#waiting.delete(id);
      signal.removeEventListener("abort", aborted);
      resolve(record);
    };
    const aborted = () => wake(undefined);
    signal.addEventListener("abort", aborted, { once: true });
    wakes.add(wake);
    this.#waiting.set(id, wakes);
    this.#schedule();
    return promise;
  }

  /** A decision made in this process: its waiters go on now. */
  decided(record: ApprovalRecord): void {
    for (const wake of [...this.#waiting.get(record.id) ?? []]) wake(record);
  }

  get size(): number {
    return this.#waiting.size;
  }

  close(): void {
    this.#timer?.clear();
    for (const wakes of this.#waiting.values()) for (const wake of [...wakes]) wake(undefined);
  }

  #schedule(): void {
    if (this.#timer || this.#polling || this.#waiting.size === 0) return;
    this.#timer = this.clock.setTimeout(() => {
      this.#timer = undefined;
      void this.#poll();
    }, this.pollMs);
  }

  async #poll(): Promise<void> {
    this.#polling = true;
    try {
      for (const id of [...this.#waiting.keys()]) {
        const record = await this.records.get(id).catch(() => "unread" as const);
        if (record === "unread" || record?.status === "pending") continue;
        for (const wake of [...this.#waiting.get(id) ?? []]) wake(record);
      }
    } finally {
      this.#polling = false;
      this.#schedule();
    }
  }
}
