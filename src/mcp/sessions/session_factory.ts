/**
 * How a session is made: its backend connection (a backend, an aggregate's members, or a
 * backend session another replica opened, continued) and the `Session` around it, with the
 * gateway's limits, clock, deadlines and audit. The registry decides when; this says how.
 */
import { type RequestTimeout, requestTimeoutOf } from "../../config/request_timeouts.ts";
import type { Limits, ServerConfig } from "../../config/types.ts";
import type { Clock } from "../../core/clock.ts";
import type { Deadlines } from "../../core/deadlines.ts";
import type { SessionId } from "../../core/ids.ts";
import type { Principal } from "../../core/principal.ts";
import type { AuditLog } from "../../observability/audit.ts";
import type { Logger } from "../../observability/logger.ts";
import type { Backend, BackendOptions, ResumeBackend } from "../backends/connect.ts";
import { groupsValue, type PlaceholderValues } from "../backends/placeholders.ts";
import { Session, type SessionOptions } from "./session.ts";
import type { ToolGate } from "../../core/tool_gate.ts";
import type { ToolIntegrity } from "../tools/tool_integrity.ts";
import type { Continuation } from "./shared_sessions.ts";
import type { CallHolds } from "../approvals/call_hold.ts";

/** What sessions are made with (a reload may change all but the clock and the deadlines). */
export interface SessionSettings {
  limits: Limits;
  logger: Logger;
  clock: Clock;
  /** Where the sessions' request timeouts run (one per gateway, carried across reloads). */
  deadlines: Deadlines;
  /** Grace a stdio child gets between SIGTERM and SIGKILL. */
  killGraceMs: number;
  audit?: AuditLog;
  /**
   * How long `server` may take to answer a request; by default its own `requestTimeout`, else
   * `limits.requestTimeout` (app.ts also knows an aggregate's members).
   */
  requestTimeout?(server: ServerConfig): RequestTimeout;
  /** Which tools `principal` may see and call on `server`; undefined: all. */
  toolGate?(server: ServerConfig, principal: Principal): ToolGate | undefined;
  /** Tool integrity (tool_integrity.ts): approved definitions, changes held. */
  toolIntegrity?: ToolIntegrity;
  /** Calls held for a person's approval (approvals/call_hold.ts). */
  callHolds?: CallHolds;
  /**
   * Makes the backend connection for a session (one backend, or an aggregate's members).
   * Throws `CredentialRequiredError` when the backend needs a credential the person lacks.
   */
  connect(
    server: ServerConfig,
    user: PlaceholderValues,
    options: BackendOptions,
    resume?: ResumeBackend,
    /** Whose session it is (an aggregate leaves out the members they may not use). */
    principal?: Principal,
  ): Backend | Promise<Backend>;
}

export class SessionFactory {
  constructor(private readonly settings: () => SessionSettings) {}

  /** The backend connection for session `id` (continuing `from`'s backend session if given). */
  connect(
    id: SessionId,
    server: ServerConfig,
    principal: Principal,
    from?: Continuation,
  ): Backend | Promise<Backend> {
    const settings = this.settings();
    const backendOptions: BackendOptions = {
      maxMessageBytes: settings.limits.maxMessageBytes,
      killGraceMs: settings.killGraceMs,
      logger: this.#logger(id, server),
      clock: settings.clock,
      requestTimeoutMs: this.#timeout(server).ms,
    };
    return settings.connect(
      server,
      {
        "user.id": principal.id,
        "user.email": principal.email,
        "user.groups": groupsValue(principal.allGroups ?? principal.groups),
      },
      backendOptions,
      from?.backend,
      principal,
    );
  }

  /** The session around `backend`; continuing what `from`'s initialize settled, if given. */
  create(
    id: SessionId,
    server: ServerConfig,
    principal: Principal,
    backend: Backend,
    from?: Continuation,
    onInitialized?: SessionOptions["onInitialized"],
  ): Session {
    const settings = this.settings();
    return new Session({
      id,
      server,
      principal,
      backend,
      requestTimeoutMs: this.#timeout(server).ms,
      requestTimeoutSetting: this.#timeout(server).setting,
      logger: this.#logger(id, server),
      clock: settings.clock,
      deadlines: settings.deadlines,
      audit: settings.audit,
      toolGate: settings.toolGate?.(server, principal),
      toolIntegrity: settings.toolIntegrity,
      holds: settings.callHolds?.forSession(server, principal),
      resumed: from && {
        protocolVersion: from.backend.protocolVersion,
        clientCapabilities: from.clientCapabilities,
      },
      onInitialized,
    });
  }

  /** Ends the backend session `from` names, with no session of this process around it. */
  async stopBackend(
    id: SessionId,
    server: ServerConfig,
    principal: Principal,
    from: Continuation,
  ): Promise<void> {
    const backend = await this.connect(id, server, principal, from);
    await backend.transport.start();
    await backend.close();
  }

  #timeout(server: ServerConfig): RequestTimeout {
    const settings = this.settings();
    return settings.requestTimeout?.(server) ?? requestTimeoutOf(server, settings.limits);
  }

  #logger(id: SessionId, server: ServerConfig): Logger {
    return this.settings().logger.child({ session: id, server: server.name });
  }
}
