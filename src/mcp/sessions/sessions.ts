/**
 * This process's client sessions: creation under the configured limits, lookup by their
 * caller, idle reaping and shutdown. Sessions of one user count against that user's limit
 * until their backend has stopped (session_slots.ts). Whatever concerns other replicas (a
 * session opened elsewhere, continued or ended here) is asked of shared_sessions.ts.
 */
import type { Clock } from "../../core/clock.ts";
import type { ServerConfig } from "../../config/types.ts";
import type { Timer } from "../../core/clock.ts";
import type { Deadlines } from "../../core/deadlines.ts";
import type { SessionId } from "../../core/ids.ts";
import { type Principal, statesTheSame } from "../../core/principal.ts";
import { randomHex } from "../../crypto/random.ts";
import type { Backend } from "../backends/connect.ts";
import { ProcessLimitError } from "../backends/process_pool.ts";
import type { Session } from "./session.ts";
import { SessionFactory, type SessionSettings } from "./session_factory.ts";
import { SessionLimitError, SessionSlots, type Slot } from "./session_slots.ts";
import {
  type Continuation,
  type SharedSessions,
  sharedSessions,
  type Sharing,
} from "./shared_sessions.ts";

export { SessionLimitError };

export interface SessionRegistryOptions extends SessionSettings {
  /** The prefix of this process's session ids, so a load balancer can keep them sticky. */
  idPrefix?: string;
  /** Where sessions are shared with other replicas; without it none are. */
  sharing?: Sharing;
}

export class SessionRegistry {
  readonly #sessions = new Map<SessionId, Session>();
  readonly #slots: SessionSlots;
  readonly #shared: SharedSessions;
  readonly #factory = new SessionFactory(() => this.options);
  readonly #reaping = new Set<Session>();
  readonly #reaper: Timer;
  #closing = false;

  constructor(private options: SessionRegistryOptions) {
    this.#slots = new SessionSlots(
      () => this.options.limits,
      (session, user) =>
        this.options.logger.info("session ended to make room", {
          session: (session as Session).id,
          user,
        }),
    );
    this.#shared = sharedSessions({
      sharing: () => this.options.sharing,
      idleTimeoutMs: () => this.options.limits.sessionIdleTimeoutMs,
      clock: options.clock,
      logger: options.logger,
      closing: () => this.#closing,
      continue: (id, server, principal, from) => this.#continue(id, server, principal, from),
      stopBackend: (id, server, principal, from) =>
        this.#factory.stopBackend(id, server, principal, from),
    });
    const idle = options.limits.sessionIdleTimeoutMs;
    this.#reaper = options.clock.setInterval(
      () => this.reapIdle(),
      Math.max(250, Math.min(idle / 4, 30_000)),
      { unref: true },
    );
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** Places under the limits held now: open sessions, and ended ones whose backend still runs. */
  get placesHeld(): number {
    return this.#slots.total;
  }

  /** The time sessions live by; a front's own timers for a session (keep-alives) use it too. */
  get clock(): Clock {
    return this.options.clock;
  }

  /** Where the sessions' timeouts run; a front's own timers for a session run there too. */
  get deadlines(): Deadlines {
    return this.options.deadlines;
  }

  /**
   * A configuration reload: new sessions get the new limits and connections; sessions whose
   * server is gone or changed (`keep` says no) are ended, the others continue.
   */
  async reconfigure(
    options: SessionRegistryOptions,
    keep: (session: Session) => boolean,
  ): Promise<void> {
    this.options = options;
    const ending = [...this.#sessions.values()].filter((session) => !keep(session));
    await Promise.all(
      ending.map((session) =>
        session.close("its server was changed or removed by a configuration reload")
      ),
    );
  }

  /** Open sessions per server name. */
  countByServer(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const session of this.#sessions.values()) {
      counts.set(session.server.name, (counts.get(session.server.name) ?? 0) + 1);
    }
    return counts;
  }

  /** Every session held here (for the operator console: read, never kept). */
  list(): IterableIterator<Session> {
    return this.#sessions.values();
  }

  /** The session `id` held here, whoever it belongs to (for operators and tests). */
  get(id: SessionId): Session | undefined {
    return this.#sessions.get(id);
  }

  /**
   * The open session `id` held here, if it belongs to this server and this caller. Someone
   * else's session id is treated exactly like an unknown one.
   */
  findHere(id: SessionId, server: ServerConfig, principal: Principal): Session | undefined {
    const session = this.#sessions.get(id);
    if (!session || session.closed) return undefined;
    if (session.server.name !== server.name || session.principal.id !== principal.id) {
      return undefined;
    }
    // A token stating other groups (or email) than the session was opened with: the person's
    // sign-in changed; a session of the new one is asked for rather than the old one told on.
    if (!statesTheSame(session.principal, principal)) return undefined;
    return session;
  }

  /**
   * The caller's session `id`: held here, or continued here from another replica when it can
   * be. A continued session has no channel to its client yet.
   */
  async find(
    id: SessionId,
    server: ServerConfig,
    principal: Principal,
  ): Promise<Session | undefined> {
    const here = this.findHere(id, server, principal);
    if (here) {
      this.#shared.touch(here);
      return here;
    }
    if (this.#sessions.has(id)) return undefined;
    const adopted = await this.#shared.adopt(id, server, principal).catch((error) => {
      this.options.logger.warn("could not continue a session from another replica", { error });
      return undefined;
    });
    return adopted?.closed ? undefined : adopted;
  }

  /**
   * Opens a session and starts its backend; at the person's limit their least recently used
   * idle session ends to make room. Throws `SessionLimitError` when none can.
   */
  async open(server: ServerConfig, principal: Principal): Promise<Session> {
    const slot = await this.#reserve(principal);
    const prefix = this.options.idPrefix;
    const id = `${prefix ? `${prefix}.` : ""}${randomHex(16)}` as SessionId;
    const session = await this.#start(id, server, principal, slot);
    this.options.logger.info("session opened", {
      session: id,
      server: server.name,
      user: principal.id,
    });
    return session;
  }

  /**
   * Ends the caller's session `id` for good, whether this process holds it or only another
   * replica does; false when the caller has no such session. Resolves once no replica can
   * continue it (its tombstone is stored) and its backend has stopped (the backend session
   * ended, the child exited), so that what the client does next cannot find it.
   */
  async end(
    id: SessionId,
    server: ServerConfig,
    principal: Principal,
    reason: string,
  ): Promise<boolean> {
    const here = this.findHere(id, server, principal);
    if (here) {
      const stopped = here.close(reason);
      await Promise.all([stopped, this.#shared.settled(id)]);
      return true;
    }
    if (this.#sessions.has(id)) return false;
    return await this.#shared.endElsewhere(id, server, principal).catch((error) => {
      this.options.logger.warn("could not end a session another replica holds", {
        session: id,
        error,
      });
      return false;
    });
  }

  /**
   * Ends every session here opened under one of `grantIds` (revoked grants), a stateless
   * link opened by such a token included; its client then gets 404, as for any ended session.
   * Returns how many ended. Another replica ends the ones it holds when it learns the same.
   */
  async endGrants(grantIds: readonly string[], reason: string): Promise<number> {
    const revoked = new Set(grantIds);
    const ending = [...this.#sessions.values()].filter((session) =>
      session.principal.grantId !== undefined && revoked.has(session.principal.grantId)
    );
    await Promise.all(ending.map((session) => session.close(reason)));
    return ending.length;
  }

  /** Ends sessions with nothing in flight, no open stream, and no activity for the idle limit. */
  reapIdle(): void {
    const cutoff = this.options.clock.now() - this.options.limits.sessionIdleTimeoutMs;
    for (const session of this.#sessions.values()) {
      if (
        session.openStreams === 0 && session.pendingCount === 0 &&
        session.activity.last < cutoff && !this.#reaping.has(session)
      ) {
        this.#reaping.add(session);
        void this.#shared.endIdle(
          session,
          "the session was idle too long (limits.sessionIdleTimeout)",
        )
          .finally(() => this.#reaping.delete(session));
      }
    }
  }

  /** Ends every session and stops every backend. */
  async closeAll(reason: string): Promise<void> {
    this.#closing = true;
    this.#reaper.clear();
    await Promise.all([...this.#sessions.values()].map((session) => session.close(reason)));
  }

  /** Starts a session here continuing another process's; undefined when there is no room. */
  async #continue(
    id: SessionId,
    server: ServerConfig,
    principal: Principal,
    from: Continuation,
  ): Promise<Session | undefined> {
    let slot: Slot;
    try {
      slot = await this.#reserve(principal);
    } catch (error) {
      if (error instanceof SessionLimitError) return undefined;
      throw error;
    }
    return await this.#start(id, server, principal, slot, from);
  }

  /** A place for a new session of this person (session_slots.ts). */
  async #reserve(principal: Principal): Promise<Slot> {
    if (this.#closing) throw new SessionLimitError("the gateway is shutting down");
    const slot = await this.#slots.reserve(principal.id);
    if (this.#closing) {
      this.#slots.free(slot);
      throw new SessionLimitError("the gateway is shutting down");
    }
    return slot;
  }

  /**
   * Connects the backend (or continues `from`'s backend session) and registers the session,
   * which holds `slot` until its backend has stopped.
   */
  async #start(
    id: SessionId,
    server: ServerConfig,
    principal: Principal,
    slot: Slot,
    from?: Continuation,
  ): Promise<Session> {
    let backend: Backend;
    try {
      backend = await this.#factory.connect(id, server, principal, from);
    } catch (error) {
      this.#slots.free(slot); // no session holds the place yet
      // No room for another shared process: said to the client as any limit is (429).
      if (error instanceof ProcessLimitError) throw new SessionLimitError(error.message);
      throw error;
    }
    // Shared before the client learns the session id: a load balancer may send the very next
    // request to another replica, which must find the record there.
    const publish = this.#shared.shareable(server)
      ? (initialized: Session) => this.#shared.publish(initialized)
      : undefined;
    const session = this.#factory.create(id, server, principal, backend, from, publish);
    this.#sessions.set(id, session);
    this.#slots.hold(slot, session);
    session.onClose(() => this.#forget(session));
    try {
      await session.start();
    } catch (error) {
      await session.close(`the backend could not start: ${(error as Error).message}`);
      throw error;
    }
    return session;
  }

  /** The session no longer answers here; its place stays taken until its backend stops. */
  #forget(session: Session): void {
    if (this.#sessions.get(session.id) !== session) return;
    this.#sessions.delete(session.id);
    this.#shared.forget(session);
    this.options.logger.info("session closed", {
      session: session.id,
      server: session.server.name,
    });
  }
}
