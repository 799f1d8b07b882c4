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
import type { Backend, BackendOptions } from "./backends/connect.ts";
import type { PlaceholderValues } from "./backends/placeholders.ts";
import { Session } from "./session.ts";

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
  ): Backend | Promise<Backend>;
}

export class SessionRegistry {
  readonly #sessions = new Map<SessionId, Session>();
  readonly #perUser = new Map<string, number>();
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
    const { limits, logger } = this.options;
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
    const id = randomHex(16) as SessionId;
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
    );
    const session = new Session({
      id,
      server,
      principal,
      backend,
      requestTimeoutMs: limits.requestTimeoutMs,
      logger: sessionLogger,
      now: this.options.now,
      audit: this.options.audit,
    });
    this.#sessions.set(id, session);
    this.#perUser.set(principal.id, held + 1);
    session.onClose(() => this.#forget(session));
    try {
      await session.start();
    } catch (error) {
      await session.close(`the backend could not start: ${(error as Error).message}`);
      throw error;
    }
    sessionLogger.info("session opened", { user: principal.id });
    return session;
  }

  #forget(session: Session): void {
    if (this.#sessions.get(session.id) !== session) return;
    this.#sessions.delete(session.id);
    const held = (this.#perUser.get(session.principal.id) ?? 1) - 1;
    if (held > 0) this.#perUser.set(session.principal.id, held);
    else this.#perUser.delete(session.principal.id);
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
        session.openStreams === 0 && session.pendingCount === 0 && session.lastActivity < cutoff
      ) {
        void session.close("the session was idle too long (limits.sessionIdleTimeout)");
      }
    }
  }

  /** Ends every session and stops every backend. */
  async closeAll(reason: string): Promise<void> {
    this.#closing = true;
    clearInterval(this.#reaper);
    await Promise.all([...this.#sessions.values()].map((session) => session.close(reason)));
  }
}
