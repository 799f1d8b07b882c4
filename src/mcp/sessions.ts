/**
 * The registry of live client sessions: creation under the configured limits, lookup, idle
 * reaping and shutdown. Sessions of one user count against that user's limit until their
 * backend has stopped (session_slots.ts).
 */
import type { Limits, ServerConfig } from "../config/types.ts";
import type { SessionId } from "../core/ids.ts";
import type { Principal } from "../core/principal.ts";
import { randomHex } from "../crypto/random.ts";
import type { AuditLog } from "../observability/audit.ts";
import type { Logger } from "../observability/logger.ts";
import type { Backend, BackendOptions, ResumeBackend } from "./backends/connect.ts";
import type { PlaceholderValues } from "./backends/placeholders.ts";
import { Session } from "./session.ts";
import { SessionLimitError, SessionSlots, type Slot } from "./session_slots.ts";
import {
  OWNERSHIP_CHECK_MS,
  type SessionDirectory,
  type SharedSessionRecord,
} from "./shared_sessions.ts";

export { SessionLimitError };

export interface SessionRegistryOptions {
  limits: Limits;
  logger: Logger;
  now: () => number;
  /** Grace a stdio child gets between SIGTERM and SIGKILL. */
  killGraceMs: number;
  audit?: AuditLog;
  /**
   * Makes the backend connection for a session (one backend, or an aggregate's members).
   * Throws `CredentialRequiredError` when the backend needs a credential the person lacks.
   */
  connect(
    server: ServerConfig,
    user: PlaceholderValues,
    options: BackendOptions,
    resume?: ResumeBackend,
  ): Backend | Promise<Backend>;
  /** Shared storage for sessions other replicas may continue; without it none are shared. */
  directory?: SessionDirectory;
  /** This replica: the prefix of its session ids (for load balancers), its name as an owner. */
  replica: { prefix?: string; owner: string };
}

export class SessionRegistry {
  readonly #sessions = new Map<SessionId, Session>();
  readonly #slots: SessionSlots;
  readonly #adopting = new Map<SessionId, Promise<Session | undefined>>();
  /** Sessions ended here whose tombstone is still being written: not to be continued. */
  readonly #ending = new Map<SessionId, Promise<void>>();
  readonly #reaping = new Set<Session>();
  readonly #reaper: ReturnType<typeof setInterval>;
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
    const idle = options.limits.sessionIdleTimeoutMs;
    this.#reaper = setInterval(() => this.reapIdle(), Math.max(250, Math.min(idle / 4, 30_000)));
    Deno.unrefTimer(this.#reaper);
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** Places under the limits held now: open sessions, and ended ones whose backend still runs. */
  get placesHeld(): number {
    return this.#slots.total;
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

  get(id: SessionId): Session | undefined {
    return this.#sessions.get(id);
  }

  /**
   * Opens a session and starts its backend; at the person's limit their least recently used
   * idle session ends to make room. Throws `SessionLimitError` when none can.
   */
  async open(server: ServerConfig, principal: Principal): Promise<Session> {
    const slot = await this.#reserve(principal);
    const prefix = this.options.replica.prefix;
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
   * Continues a session another replica opened, when its record is shared, names this server
   * and belongs to this caller; undefined otherwise (the client then starts a new one).
   */
  async adopt(id: SessionId, server: ServerConfig, principal: Principal) {
    if (
      !this.options.directory || server.transport !== "streamable-http" || this.#closing ||
      this.#ending.has(id)
    ) {
      return undefined;
    }
    let adopting = this.#adopting.get(id);
    if (!adopting) {
      adopting = this.#adopt(id, server, principal).finally(() => this.#adopting.delete(id));
      this.#adopting.set(id, adopting);
    }
    const session = await adopting;
    return session?.principal.id === principal.id ? session : undefined;
  }

  async #adopt(
    id: SessionId,
    server: ServerConfig,
    principal: Principal,
  ): Promise<Session | undefined> {
    const directory = this.options.directory!;
    const record = await directory.find(id).catch((error) => {
      this.options.logger.warn("could not read a shared session", { session: id, error });
      return undefined;
    });
    const now = this.options.now();
    if (
      !record || record.server !== server.name || record.principal.id !== principal.id ||
      record.expiresAt <= now
    ) return undefined;
    let slot: Slot;
    try {
      slot = await this.#reserve(principal);
    } catch (error) {
      if (error instanceof SessionLimitError) return undefined;
      throw error;
    }
    const session = await this.#start(id, server, principal, slot, record);
    session.protocolVersion = record.protocolVersion;
    session.clientCapabilities = record.clientCapabilities;
    // Conditional: a session ended (anywhere) since the record was read stays ended.
    const published = await this.#publish(session, "renew", record).catch((error) => {
      void session.release("its record could not be renewed");
      throw error;
    });
    if (!published) {
      void session.release("the session was ended meanwhile");
      return undefined;
    }
    this.options.logger.info("session continued from another replica", {
      session: id,
      server: server.name,
      user: principal.id,
      previousOwner: record.owner,
    });
    return session;
  }

  /**
   * A shared session was just used here: now and then, make sure this replica still owns it
   * (and its record stays alive); a session ended on another replica is let go of here too.
   */
  touch(session: Session): void {
    const directory = this.options.directory;
    if (!directory || !session.sharedRecord) return;
    const now = this.options.now();
    if (now - session.ownershipCheckedAt < OWNERSHIP_CHECK_MS) return;
    session.ownershipCheckedAt = now;
    void (async () => {
      const ended = "the session was ended on another replica";
      const record = await directory.find(session.id);
      if (!record) return await session.release(ended);
      const ttl = this.#recordTtl();
      if (record.owner !== this.options.replica.owner || record.expiresAt - now < ttl / 2) {
        if (!await this.#publish(session, "renew", record)) await session.release(ended);
      }
    })().catch((error) =>
      this.options.logger.warn("could not check a shared session", { session: session.id, error })
    );
  }

  #recordTtl(): number {
    return this.options.limits.sessionIdleTimeoutMs + 2 * OWNERSHIP_CHECK_MS;
  }

  /**
   * Writes the session's shared record with this replica as its owner: `create` for a new
   * session, `renew` only over a live record. False when the session was ended meanwhile.
   */
  async #publish(
    session: Session,
    mode: "create" | "renew",
    base?: SharedSessionRecord,
  ): Promise<boolean> {
    const now = this.options.now();
    const record: SharedSessionRecord = {
      server: session.server.name,
      principal: base?.principal ?? session.principal,
      backendSessionId: session.sharedBackendSessionId ?? base?.backendSessionId ?? "",
      protocolVersion: session.protocolVersion,
      clientCapabilities: session.clientCapabilities,
      owner: this.options.replica.owner,
      expiresAt: now + this.#recordTtl(),
    };
    const written = await this.options.directory!.save(session.id, record, mode);
    if (!written) return false;
    session.sharedRecord = true;
    session.ownershipCheckedAt = now;
    // Ended while the record was being written: the end's tombstone may have come first.
    if (session.closed && !session.released) await this.#tombstone(session.id);
    return true;
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

  /** The backend connection for a session (continuing `record`'s backend session if given). */
  #connect(
    server: ServerConfig,
    principal: Principal,
    logger: Logger,
    record?: SharedSessionRecord,
  ): Backend | Promise<Backend> {
    const backendOptions: BackendOptions = {
      maxMessageBytes: this.options.limits.maxMessageBytes,
      killGraceMs: this.options.killGraceMs,
      logger,
    };
    return this.options.connect(
      server,
      { "user.id": principal.id, "user.email": principal.email },
      backendOptions,
      record && { sessionId: record.backendSessionId, protocolVersion: record.protocolVersion },
    );
  }

  #sessionLogger(id: SessionId, server: ServerConfig): Logger {
    return this.options.logger.child({ session: id, server: server.name });
  }

  /**
   * Connects the backend (or continues `record`'s backend session) and registers the session,
   * which holds `slot` until its backend has stopped.
   */
  async #start(
    id: SessionId,
    server: ServerConfig,
    principal: Principal,
    slot: Slot,
    record?: SharedSessionRecord,
  ): Promise<Session> {
    const { limits } = this.options;
    const sessionLogger = this.#sessionLogger(id, server);
    let backend: Backend;
    try {
      backend = await this.#connect(server, principal, sessionLogger, record);
    } catch (error) {
      this.#slots.free(slot); // no session holds the place yet
      throw error;
    }
    const shareable = this.options.directory && server.transport === "streamable-http";
    const session = new Session({
      id,
      server,
      principal,
      backend,
      requestTimeoutMs: limits.requestTimeoutMs,
      logger: sessionLogger,
      now: this.options.now,
      audit: this.options.audit,
      // Shared before the client learns the session id: a load balancer may send the very next
      // request to another replica, which must find the record there.
      onInitialized: shareable
        ? (initialized) =>
          this.#publish(initialized, "create").then(
            () => {},
            (error) =>
              sessionLogger.warn("could not share the session with other replicas", { error }),
          )
        : undefined,
    });
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
    if (session.sharedRecord && !session.released) {
      // Ended for good (by the client, the backend, idleness or shutdown): nobody continues it.
      const ending = this.#tombstone(session.id).finally(() => this.#ending.delete(session.id));
      this.#ending.set(session.id, ending);
    }
    this.options.logger.info("session closed", {
      session: session.id,
      server: session.server.name,
    });
  }

  #tombstone(id: SessionId): Promise<void> {
    return this.options.directory!.end(id, this.options.now() + this.#recordTtl()).catch((error) =>
      this.options.logger.warn("could not mark a shared session as ended", { session: id, error })
    );
  }

  /**
   * Ends a session for good at its client's request. Resolves once no replica can continue it
   * (its tombstone is stored) and its backend has stopped (the backend session ended, the child
   * exited), so that what the client does next cannot find it.
   */
  async end(session: Session, reason: string): Promise<void> {
    const stopped = session.close(reason);
    await Promise.all([stopped, this.#ending.get(session.id)]);
  }

  /**
   * Ends the caller's shared session `id` that this replica does not hold: a tombstone, then the
   * backend session (so a replica still holding a copy finds it gone at its next request).
   * False when there is no such session of this caller.
   */
  async endShared(id: SessionId, server: ServerConfig, principal: Principal): Promise<boolean> {
    const directory = this.options.directory;
    if (!directory || server.transport !== "streamable-http") return false;
    const record = await directory.find(id);
    if (!record || record.server !== server.name || record.principal.id !== principal.id) {
      return false;
    }
    await directory.end(id, this.options.now() + this.#recordTtl());
    try {
      const logger = this.#sessionLogger(id, server);
      const backend = await this.#connect(server, principal, logger, record);
      await backend.transport.start();
      await backend.close();
    } catch (error) {
      // The session is ended here all the same; the backend's own idle timeout ends its part.
      this.options.logger.warn("could not end the backend session", { session: id, error });
    }
    this.options.logger.info("session closed", { session: id, server: server.name });
    return true;
  }

  /** Ends sessions with nothing in flight, no open stream, and no activity for the idle limit. */
  reapIdle(): void {
    const cutoff = this.options.now() - this.options.limits.sessionIdleTimeoutMs;
    for (const session of this.#sessions.values()) {
      if (
        session.openStreams === 0 && session.pendingCount === 0 && session.lastActivity < cutoff &&
        !this.#reaping.has(session)
      ) {
        this.#reaping.add(session);
        void this.#reap(session).finally(() => this.#reaping.delete(session));
      }
    }
  }

  /** An idle shared session that another replica now serves is let go of, not ended. */
  async #reap(session: Session): Promise<void> {
    const idle = "the session was idle too long (limits.sessionIdleTimeout)";
    if (!session.sharedRecord) return await session.close(idle);
    const record = await this.options.directory!.find(session.id).catch(() => undefined);
    if (record && record.owner !== this.options.replica.owner) {
      return await session.release("another replica continues this session");
    }
    await session.close(idle);
  }

  /** Ends every session and stops every backend. */
  async closeAll(reason: string): Promise<void> {
    this.#closing = true;
    clearInterval(this.#reaper);
    await Promise.all([...this.#sessions.values()].map((session) => session.close(reason)));
  }
}
