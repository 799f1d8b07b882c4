/**
 * The registry of live client sessions: creation under the configured limits, lookup, idle
 * reaping and shutdown. Sessions of one user count against that user's limit.
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
import {
  OWNERSHIP_CHECK_MS,
  type SessionDirectory,
  type SharedSessionRecord,
} from "./shared_sessions.ts";

export class SessionLimitError extends Error {
  readonly code = "too_many_sessions";
}

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
  readonly #perUser = new Map<string, number>();
  readonly #adopting = new Map<SessionId, Promise<Session | undefined>>();
  readonly #reaping = new Set<Session>();
  readonly #reaper: ReturnType<typeof setInterval>;
  #closing = false;

  constructor(private options: SessionRegistryOptions) {
    const idle = options.limits.sessionIdleTimeoutMs;
    this.#reaper = setInterval(() => this.reapIdle(), Math.max(250, Math.min(idle / 4, 30_000)));
    Deno.unrefTimer(this.#reaper);
  }

  get size(): number {
    return this.#sessions.size;
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

  /** Opens a session and starts its backend; throws `SessionLimitError` over a limit. */
  async open(server: ServerConfig, principal: Principal): Promise<Session> {
    this.#checkLimits(principal);
    const prefix = this.options.replica.prefix;
    const id = `${prefix ? `${prefix}.` : ""}${randomHex(16)}` as SessionId;
    const session = await this.#start(id, server, principal);
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
    if (!this.options.directory || server.transport !== "streamable-http" || this.#closing) {
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
    try {
      this.#checkLimits(principal);
    } catch {
      return undefined;
    }
    const session = await this.#start(id, server, principal, record);
    session.protocolVersion = record.protocolVersion;
    session.clientCapabilities = record.clientCapabilities;
    await this.#publish(session, record);
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
      const record = await directory.find(session.id);
      if (!record) return await session.release("the session was ended on another replica");
      const ttl = this.#recordTtl();
      if (record.owner !== this.options.replica.owner || record.expiresAt - now < ttl / 2) {
        await this.#publish(session, record);
      }
    })().catch((error) =>
      this.options.logger.warn("could not check a shared session", { session: session.id, error })
    );
  }

  #recordTtl(): number {
    return this.options.limits.sessionIdleTimeoutMs + 2 * OWNERSHIP_CHECK_MS;
  }

  /** Writes the session's shared record with this replica as its owner. */
  async #publish(session: Session, base?: SharedSessionRecord): Promise<void> {
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
    await this.options.directory!.save(session.id, record);
    session.sharedRecord = true;
    session.ownershipCheckedAt = now;
  }

  #checkLimits(principal: Principal): void {
    const { limits } = this.options;
    if (this.#closing) throw new SessionLimitError("the gateway is shutting down");
    const held = this.#perUser.get(principal.id) ?? 0;
    if (held >= limits.sessionsPerUser) {
      throw new SessionLimitError(
        `too many open sessions for this user (limit ${limits.sessionsPerUser}, limits.sessionsPerUser): ` +
          "end one with DELETE, or wait for idle ones to expire",
      );
    }
    if (this.#sessions.size >= limits.maxSessions) {
      throw new SessionLimitError(
        `the gateway holds its maximum of ${limits.maxSessions} sessions (limits.maxSessions); try again later`,
      );
    }
  }

  /** Connects the backend (or continues `record`'s backend session) and registers the session. */
  async #start(
    id: SessionId,
    server: ServerConfig,
    principal: Principal,
    record?: SharedSessionRecord,
  ): Promise<Session> {
    const { limits, logger } = this.options;
    const sessionLogger = logger.child({ session: id, server: server.name });
    const backendOptions: BackendOptions = {
      maxMessageBytes: limits.maxMessageBytes,
      killGraceMs: this.options.killGraceMs,
      logger: sessionLogger,
    };
    const backend = await this.options.connect(
      server,
      { "user.id": principal.id, "user.email": principal.email },
      backendOptions,
      record && { sessionId: record.backendSessionId, protocolVersion: record.protocolVersion },
    );
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
          this.#publish(initialized).catch((error) =>
            sessionLogger.warn("could not share the session with other replicas", { error })
          )
        : undefined,
    });
    this.#sessions.set(id, session);
    this.#perUser.set(principal.id, (this.#perUser.get(principal.id) ?? 0) + 1);
    session.onClose(() => this.#forget(session));
    try {
      await session.start();
    } catch (error) {
      await session.close(`the backend could not start: ${(error as Error).message}`);
      throw error;
    }
    return session;
  }

  #forget(session: Session): void {
    if (this.#sessions.get(session.id) !== session) return;
    this.#sessions.delete(session.id);
    const held = (this.#perUser.get(session.principal.id) ?? 1) - 1;
    if (held > 0) this.#perUser.set(session.principal.id, held);
    else this.#perUser.delete(session.principal.id);
    if (session.sharedRecord && !session.released) {
      // Ended for good (by the client, the backend, idleness or shutdown): nobody continues it.
      this.options.directory?.remove(session.id).catch((error) =>
        this.options.logger.warn("could not remove a shared session", { error })
      );
    }
    this.options.logger.info("session closed", {
      session: session.id,
      server: session.server.name,
    });
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
