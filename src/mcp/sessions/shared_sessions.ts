/**
 * Replica ownership of sessions, behind one interface (`SharedSessions`): the only session code
 * that knows other replicas exist.
 *
 * A session whose backend speaks Streamable HTTP holds nothing a replica cannot rebuild from a
 * small record: the backend's session id, the negotiated protocol version, who the client is and
 * what it can do. With the record in shared storage (session_directory.ts), a request that lands
 * on another replica (a failover, a load balancer without stickiness) continues the same backend
 * session instead of failing with "session not found".
 *
 * One replica at a time owns a shared session: the last one that served it. Only the owner
 * ends the backend session when the session idles out; the others let go of their copy. A
 * session ended for good (DELETE, idleness, its backend) leaves a tombstone, so no replica
 * renews or continues it after that.
 */
import type { Clock } from "../../core/clock.ts";
import type { SessionId } from "../../core/ids.ts";
import { type Principal, statesTheSame } from "../../core/principal.ts";
import type { ServerConfig } from "../../config/types.ts";
import type { Logger } from "../../observability/logger.ts";
import type { ResumeBackend } from "../backends/connect.ts";
import type { Session } from "./session.ts";
import type { SessionDirectory, SharedSessionRecord } from "./session_directory.ts";

export {
  type SessionDirectory,
  type SharedSessionRecord,
  storeSessionDirectory,
} from "./session_directory.ts";

/** How often a replica serving a shared session checks that it still owns it. */
export const OWNERSHIP_CHECK_MS = 2_000;

/** Where sessions are shared, and this replica's name as their owner. */
export interface Sharing {
  directory: SessionDirectory;
  owner: string;
}

/** What a replica needs to continue a session another one opened. */
export interface Continuation {
  backend: ResumeBackend;
  clientCapabilities: Record<string, unknown>;
}

/** Replica ownership of this process's sessions, as the session registry uses it. */
export interface SharedSessions {
  /** Whether another replica could continue a session of `server`. */
  shareable(server: ServerConfig): boolean;
  /**
   * Makes a session whose backend just accepted initialize known to the other replicas;
   * settles once they can find it (failures are logged: the session then stays here only).
   */
  publish(session: Session): Promise<void>;
  /**
   * A session of this replica was just used: now and then, make sure this replica still owns
   * it (and its record stays alive); a session ended on another replica is let go of here too.
   */
  touch(session: Session): void;
  /**
   * Continues here the caller's session `id` that another replica opened, when its record is
   * shared, names this server and belongs to this caller; undefined otherwise.
   */
  adopt(id: SessionId, server: ServerConfig, principal: Principal): Promise<Session | undefined>;
  /** This replica no longer holds `session`; one ended for good is marked so for every replica. */
  forget(session: Session): void;
  /** Settles once no replica can continue the session `id` ended here (its tombstone is stored). */
  settled(id: SessionId): Promise<void> | undefined;
  /** Ends an idle session, or lets go of it when another replica serves it now. */
  endIdle(session: Session, reason: string): Promise<void>;
  /**
   * Ends the caller's shared session `id` that this replica does not hold: a tombstone, then the
   * backend session (so a replica still holding a copy finds it gone at its next request).
   * False when there is no such session of this caller.
   */
  endElsewhere(id: SessionId, server: ServerConfig, principal: Principal): Promise<boolean>;
}

/** What shared sessions need of this process's registry. */
export interface SharingHost {
  /** Where sessions are shared now (a reload may change it); undefined: they are not. */
  sharing(): Sharing | undefined;
  /** How long a session may idle here (the records outlive it by a little). */
  idleTimeoutMs(): number;
  /** The registry's clock and logger (a reload keeps both). */
  readonly clock: Clock;
  readonly logger: Logger;
  /** True once the registry shuts down: nothing is continued any more. */
  closing(): boolean;
  /** Starts a session here that continues another replica's; undefined when there is no room. */
  continue(
    id: SessionId,
    server: ServerConfig,
    principal: Principal,
    from: Continuation,
  ): Promise<Session | undefined>;
  /** Ends the backend session `from` names, with no session around it. */
  stopBackend(
    id: SessionId,
    server: ServerConfig,
    principal: Principal,
    from: Continuation,
  ): Promise<void>;
}

export function sharedSessions(host: SharingHost): SharedSessions {
  return new ReplicaSessions(host);
}

class ReplicaSessions implements SharedSessions {
  readonly #adopting = new Map<SessionId, Promise<Session | undefined>>();
  /** Sessions ended here whose tombstone is still being written: not to be continued. */
  readonly #ending = new Map<SessionId, Promise<void>>();
  /** Sessions of this replica whose record is shared: when ownership was last made sure of. */
  readonly #published = new WeakMap<Session, { checkedAt: number }>();

  constructor(private readonly host: SharingHost) {}

  shareable(server: ServerConfig): boolean {
    return this.host.sharing() !== undefined && server.transport === "streamable-http";
  }

  async publish(session: Session): Promise<void> {
    try {
      await this.#publish(session, "create");
    } catch (error) {
      this.host.logger.warn("could not share the session with other replicas", {
        session: session.id,
        server: session.server.name,
        error,
      });
    }
  }

  async adopt(
    id: SessionId,
    server: ServerConfig,
    principal: Principal,
  ): Promise<Session | undefined> {
    if (!this.shareable(server) || this.host.closing() || this.#ending.has(id)) return undefined;
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
    const { directory } = this.host.sharing()!;
    const record = await directory.find(id).catch((error) => {
      this.host.logger.warn("could not read a shared session", { session: id, error });
      return undefined;
    });
    if (
      !record || record.server !== server.name || record.principal.id !== principal.id ||
      !statesTheSame(record.principal, principal) || record.expiresAt <= this.host.clock.now()
    ) return undefined;
    const session = await this.host.continue(id, server, principal, continuation(record));
    if (!session) return undefined;
    // Conditional: a session ended (anywhere) since the record was read stays ended.
    const published = await this.#publish(session, "renew", record).catch((error) => {
      void session.release("its record could not be renewed");
      throw error;
    });
    if (!published) {
      void session.release("the session was ended meanwhile");
      return undefined;
    }
    this.host.logger.info("session continued from another replica", {
      session: id,
      server: server.name,
      user: principal.id,
      previousOwner: record.owner,
    });
    return session;
  }

  touch(session: Session): void {
    const sharing = this.host.sharing();
    const published = this.#published.get(session);
    if (!sharing || !published) return;
    const now = this.host.clock.now();
    if (now - published.checkedAt < OWNERSHIP_CHECK_MS) return;
    published.checkedAt = now;
    void (async () => {
      const ended = "the session was ended on another replica";
      const record = await sharing.directory.find(session.id);
      if (!record) return await session.release(ended);
      if (record.owner !== sharing.owner || record.expiresAt - now < this.#recordTtl() / 2) {
        if (!await this.#publish(session, "renew", record)) await session.release(ended);
      }
    })().catch((error) =>
      this.host.logger.warn("could not check a shared session", { session: session.id, error })
    );
  }

  forget(session: Session): void {
    if (!this.#published.has(session) || session.released) return;
    // Ended for good (by the client, the backend, idleness or shutdown): nobody continues it.
    const ending = this.#tombstone(session.id).finally(() => this.#ending.delete(session.id));
    this.#ending.set(session.id, ending);
  }

  settled(id: SessionId): Promise<void> | undefined {
    return this.#ending.get(id);
  }

  async endIdle(session: Session, reason: string): Promise<void> {
    const sharing = this.host.sharing();
    if (!sharing || !this.#published.has(session)) return await session.close(reason);
    const record = await sharing.directory.find(session.id).catch(() => undefined);
    if (record && record.owner !== sharing.owner) {
      return await session.release("another replica continues this session");
    }
    await session.close(reason);
  }

  async endElsewhere(id: SessionId, server: ServerConfig, principal: Principal): Promise<boolean> {
    const sharing = this.host.sharing();
    if (!sharing || !this.shareable(server)) return false;
    const record = await sharing.directory.find(id);
    if (!record || record.server !== server.name || record.principal.id !== principal.id) {
      return false;
    }
    await sharing.directory.end(id, this.host.clock.now() + this.#recordTtl());
    try {
      await this.host.stopBackend(id, server, principal, continuation(record));
    } catch (error) {
      // The session is ended here all the same; the backend's own idle timeout ends its part.
      this.host.logger.warn("could not end the backend session", { session: id, error });
    }
    this.host.logger.info("session closed", { session: id, server: server.name });
    return true;
  }

  #recordTtl(): number {
    return this.host.idleTimeoutMs() + 2 * OWNERSHIP_CHECK_MS;
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
    const sharing = this.host.sharing();
    // A session whose backend connection cannot be continued elsewhere stays here only.
    if (!sharing || !session.continuable) return false;
    const { directory, owner } = sharing;
    const now = this.host.clock.now();
    const record: SharedSessionRecord = {
      server: session.server.name,
      principal: base?.principal ?? session.principal,
      backendSessionId: session.sharedBackendSessionId ?? base?.backendSessionId ?? "",
      protocolVersion: session.protocolVersion,
      clientCapabilities: session.clientCapabilities,
      owner,
      expiresAt: now + this.#recordTtl(),
    };
    const written = await directory.save(session.id, record, mode);
    if (!written) return false;
    const published = this.#published.get(session);
    if (published) published.checkedAt = now;
    else this.#published.set(session, { checkedAt: now });
    // Ended while the record was being written: the end's tombstone may have come first.
    if (session.closed && !session.released) await this.#tombstone(session.id);
    return true;
  }

  #tombstone(id: SessionId): Promise<void> {
    const sharing = this.host.sharing();
    if (!sharing) return Promise.resolve(); // sharing was configured away by a reload
    const until = this.host.clock.now() + this.#recordTtl();
    return sharing.directory.end(id, until).catch((error) =>
      this.host.logger.warn("could not mark a shared session as ended", { session: id, error })
    );
  }
}

function continuation(record: SharedSessionRecord): Continuation {
  return {
    backend: { sessionId: record.backendSessionId, protocolVersion: record.protocolVersion },
    clientCapabilities: record.clientCapabilities,
  };
}
