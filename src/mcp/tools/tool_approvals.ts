/**
 * Telling clients that a tool they were not shown is now approved. A session whose list left
 * out held tools waits here; while any waits, the ledger records of their servers are read
 * every FRESH_MS, and a session whose held tool was approved (by `gatehouse tools approve`,
 * from any machine) gets `notifications/tools/list_changed` for its client, which lists again
 * and now sees the tool. Nothing runs while no session waits.
 */
import type { Clock, Timer } from "../../core/clock.ts";
import type { Logger } from "../../observability/logger.ts";

/** What the ledger says of one tool: the digests approved and waiting (tool_integrity.ts). */
export interface ToolState {
  approved?: string;
  held?: string;
}

/** A tool a session's client was not shown: whose it is, and the digest that was held. */
export interface HeldTool {
  server: string;
  tool: string;
  digest: string;
}

export interface ApprovalWaiter {
  /** Client-side name → the tool held from this session's last lists. */
  readonly held: Map<string, HeldTool>;
  /** Some of `held` were approved (and removed from it): tell the client to list again. */
  approved(): void;
}

export interface ApprovalWatchOptions {
  clock: Clock;
  logger: Logger;
  pollMs: number;
  /** What the ledger says of a server's tools now. */
  read(server: string): Promise<{ tools: Map<string, ToolState> }>;
}

export class ApprovalWatch {
  readonly #waiting = new Set<ApprovalWaiter>();
  #timer?: Timer;
  #polling = false;

  constructor(private readonly options: ApprovalWatchOptions) {}

  /** Sessions waiting for an approval. */
  get waiting(): number {
    return this.#waiting.size;
  }

  /** `waiter` has held tools (again): watch them until approved or `forget`. */
  wait(waiter: ApprovalWaiter): void {
    if (waiter.held.size === 0) return this.forget(waiter);
    this.#waiting.add(waiter);
    this.#timer ??= this.options.clock.setInterval(
      () => void this.#poll(),
      this.options.pollMs,
      { unref: true },
    );
  }

  forget(waiter: ApprovalWaiter): void {
    this.#waiting.delete(waiter);
    if (this.#waiting.size === 0) {
      this.#timer?.clear();
      this.#timer = undefined;
    }
  }

  /** One read per server that a waiting session holds a tool of; one poll at a time. */
  async #poll(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    try {
      const servers = new Set<string>();
      for (const waiter of this.#waiting) {
        for (const held of waiter.held.values()) servers.add(held.server);
      }
      const now = new Map<string, Map<string, ToolState>>();
      await Promise.all([...servers].map(async (server) => {
        now.set(server, (await this.options.read(server)).tools);
      }));
      for (const waiter of [...this.#waiting]) {
        let approved = false;
        for (const [name, held] of waiter.held) {
          const known = now.get(held.server)?.get(held.tool);
          if (known?.approved === held.digest && !known.held) {
            waiter.held.delete(name);
            approved = true;
          }
        }
        if (waiter.held.size === 0) this.forget(waiter);
        if (approved) waiter.approved();
      }
    } catch (error) {
      this.options.logger.warn("could not read tool approvals", { error });
    } finally {
      this.#polling = false;
    }
  }
}
