/**
 * The kept-alive connections waiting for their next request, per origin. A server may close an
 * idle connection whenever it likes (its keep-alive timeout); a request written onto one it has
 * just closed is lost, and for a request that is not idempotent the client cannot tell whether
 * the server read it first. So the pool hands out only connections it has reason to think are
 * alive: each idle connection keeps a read waiting that notices the server closing it; one idle
 * longer than `idleTimeoutMs` (kept below the usual server keep-alive timeouts) is closed rather
 * than reused; and, when asked to, a connection that has been quiet a while is handed out only
 * after the event loop has polled the sockets once more, so that a close already in the socket
 * is seen before anything is written.
 *
 * That last check costs a timer tick (about a millisecond) and is made only where a close is
 * plausible: a connection quiet for `STALE_CHECK_AFTER_MS` or more. Deno's runtime polls the
 * sockets only every few dozen tasks while it is busy, so neither a microtask nor an
 * `setImmediate` turn is enough: a timer makes it wait, and waiting polls the sockets.
 */
import type { Clock, Timer } from "../core/clock.ts";
import type { Connection } from "./http1_connection.ts";

/** A connection quiet this long is checked before a request that must not go twice. */
export const STALE_CHECK_AFTER_MS = 100;

export interface IdlePoolOptions {
  /** Idle connections kept per origin. */
  maxIdlePerOrigin: number;
  /** A connection idle this long is closed, never reused. */
  idleTimeoutMs: number;
  /** Idle times and the sweep that closes idle connections follow this clock. */
  clock: Clock;
}

export class IdlePool {
  readonly #idle = new Map<string, Connection[]>();
  #sweeper?: Timer;
  #closed = false;

  constructor(private readonly options: IdlePoolOptions) {}

  /** Open idle connections, for tests and metrics. */
  get size(): number {
    let count = 0;
    for (const list of this.#idle.values()) count += list.length;
    return count;
  }

  /**
   * An idle connection to `origin` that is still open, or undefined. With `checkFirst`, a
   * candidate quiet for STALE_CHECK_AFTER_MS or more is checked first (see above), and one that
   * turns out closed is dropped for the next.
   */
  async take(origin: string, checkFirst: boolean): Promise<Connection | undefined> {
    for (;;) {
      const connection = this.#idle.get(origin)?.pop();
      if (!connection) return undefined;
      if (connection.broken) continue;
      const idleMs = this.options.clock.now() - connection.idleSince;
      if (idleMs > this.options.idleTimeoutMs) {
        connection.close();
        continue;
      }
      if (checkFirst && idleMs >= STALE_CHECK_AFTER_MS) {
        // Out of the list meanwhile, so no one else takes it while its parked read has a chance.
        await settledOrPolled(connection.parkedRead);
        if (connection.broken) continue;
      }
      connection.reused = true;
      return connection;
    }
  }

  /** Keeps a connection whose answer was read to its end for the next request. */
  release(connection: Connection): void {
    const list = this.#idle.get(connection.origin) ?? [];
    if (this.#closed || connection.broken || list.length >= this.options.maxIdlePerOrigin) {
      return connection.close();
    }
    list.push(connection);
    this.#idle.set(connection.origin, list);
    const parked = connection.park(this.options.clock.now());
    // Anything arriving on an idle connection (the server closing it, or stray bytes) ends it.
    void parked.then(() => {
      if (!connection.isParked(parked)) return;
      connection.close();
      this.#remove(connection);
    });
    this.#sweeper ??= this.options.clock.setInterval(
      () => this.#sweep(),
      this.options.idleTimeoutMs / 2,
      { unref: true },
    );
  }

  /** Closes the idle connections; later releases close theirs. */
  close(): void {
    this.#closed = true;
    this.#sweeper?.clear();
    for (const list of this.#idle.values()) for (const connection of list) connection.close();
    this.#idle.clear();
  }

  #remove(connection: Connection): void {
    const list = this.#idle.get(connection.origin);
    const at = list?.indexOf(connection) ?? -1;
    if (at >= 0) list!.splice(at, 1);
  }

  #sweep(): void {
    const oldest = this.options.clock.now() - this.options.idleTimeoutMs;
    for (const [origin, list] of this.#idle) {
      for (let i = list.length - 1; i >= 0; i--) {
        if (list[i].idleSince >= oldest) continue;
        list[i].close();
        list.splice(i, 1);
      }
      if (!list.length) this.#idle.delete(origin);
    }
  }
}

/** Waits for `read` to settle or for the event loop to have polled the sockets, whichever is first. */
async function settledOrPolled(read: Promise<unknown> | undefined): Promise<void> {
  // A platform timer on purpose: this waits for the event loop to turn, not for gateway time.
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([read, new Promise<void>((resolve) => timer = setTimeout(resolve, 0))]);
  } finally {
    clearTimeout(timer);
  }
}
