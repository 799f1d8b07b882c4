/**
 * The client requests one session waits on: each one's timeout (started again by the backend's
 * progress on it), which progress token belongs to which request, and the audit record of how
 * each one ended.
 */
import type { Clock } from "../../core/clock.ts";
import type { Deadline, Deadlines } from "../../core/deadlines.ts";
import type { SessionId } from "../../core/ids.ts";
import type { Principal } from "../../core/principal.ts";
import { AUDITED_METHODS, type AuditLog, type AuditOutcome } from "../../observability/audit.ts";
import { idKey, type RequestId, type RpcRequest, type RpcResponse } from "../protocol/jsonrpc.ts";
import { type RequestTrace, traceRequest, type TraceSubject } from "./request_trace.ts";

export interface PendingRequest {
  readonly id: RequestId;
  readonly method: string;
  readonly progressToken?: string | number;
  readonly startedAt: number;
  /** The client address the request came from, when known (for the audit). */
  readonly from?: string;
  /** For audited methods: what was called, and with which arguments (when audited). */
  readonly audit?: { target?: string; arguments?: unknown };
  /** Its spans, when tracing is on (request_trace.ts); ended with its outcome. */
  readonly trace?: RequestTrace;
}

interface Waiting extends PendingRequest {
  timer: Deadline;
}

export interface PendingRequestsOptions {
  clock: Clock;
  deadlines: Deadlines;
  timeoutMs: number;
  /** Where `timeoutMs` is set; `limits.requestTimeout` unless said. */
  timeoutSetting?: string;
  /** Where calls are recorded: who called which tool, outcome, duration. */
  audit?: AuditLog;
  /** Whose calls these are, as the audit records name them. */
  subject: { session: SessionId; server: string; principal: Principal } & TraceSubject;
  /**
   * A request's time ran out (it is no longer pending, its outcome is recorded); `message`
   * says so in words for the client.
   */
  onTimeout(pending: PendingRequest, message: string): void;
}

export class PendingRequests {
  readonly #waiting = new Map<string, Waiting>();

  constructor(private readonly options: PendingRequestsOptions) {}

  get size(): number {
    return this.#waiting.size;
  }

  has(id: RequestId): boolean {
    return this.#waiting.has(idKey(id));
  }

  /** Every request still waiting, oldest first. */
  all(): PendingRequest[] {
    return [...this.#waiting.values()];
  }

  /** Starts waiting for the answer to `request`; its clock starts now. */
  add(request: RpcRequest, from?: string): PendingRequest {
    const meta = request.params?._meta as Record<string, unknown> | undefined;
    const waiting: Waiting = {
      id: request.id,
      method: request.method,
      progressToken: meta?.progressToken as string | number | undefined,
      timer: this.#startTimer(request.id, request.method),
      startedAt: this.options.clock.now(),
      ...(from !== undefined && { from }),
      audit: this.#auditDetails(request),
      trace: traceRequest(request, this.options.subject),
    };
    this.#waiting.set(idKey(request.id), waiting);
    return waiting;
  }

  /** The backend answered: the request is settled, its outcome recorded; undefined if none waits. */
  answered(response: RpcResponse): PendingRequest | undefined {
    const pending = this.settle(response.id);
    if (pending?.audit || pending?.trace) {
      const result = response.result as { isError?: unknown } | undefined;
      if (response.error) this.record(pending, "error", response.error.code);
      else this.record(pending, result?.isError === true ? "tool_error" : "ok");
    }
    return pending;
  }

  /** A request the gateway answered itself and never sent (a tool the caller may not use). */
  refused(request: RpcRequest): void {
    const startedAt = this.options.clock.now();
    const pending = { id: request.id, method: request.method, startedAt };
    this.record({ ...pending, audit: this.#auditDetails(request) }, "refused");
  }

  /** The client gave up on `id` (notifications/cancelled). */
  cancelled(id: RequestId): void {
    this.record(this.settle(id), "cancelled");
  }

  /** The session ended: every request still waiting is answered with an error saying why. */
  endAll(reason: string, reply: (id: RequestId, message: string) => void): void {
    for (const pending of this.all()) {
      this.record(this.settle(pending.id), "session_ended");
      reply(pending.id, `${reason} before answering ${pending.method}`);
    }
  }

  /** Stops waiting for `id`; returns the request if it was still pending. */
  settle(id: RequestId): PendingRequest | undefined {
    const key = idKey(id);
    const waiting = this.#waiting.get(key);
    if (!waiting) return undefined;
    this.options.deadlines.cancel(waiting.timer);
    this.#waiting.delete(key);
    return waiting;
  }

  /**
   * The request a progress notification with `token` belongs to. Progress shows the backend is
   * working on it: the request's clock starts again.
   */
  progressed(token: unknown): RequestId | undefined {
    for (const waiting of this.#waiting.values()) {
      if (waiting.progressToken !== undefined && waiting.progressToken === token) {
        this.options.deadlines.cancel(waiting.timer);
        waiting.timer = this.#startTimer(waiting.id, waiting.method);
        return waiting.id;
      }
    }
    return undefined;
  }

  /** Records an audited request's outcome (requests of other methods are not recorded). */
  record(pending: PendingRequest | undefined, outcome: AuditOutcome, errorCode?: number): void {
    pending?.trace?.end(outcome, errorCode);
    const audit = this.options.audit;
    if (!pending?.audit || !audit) return;
    const { session, server, principal } = this.options.subject;
    audit.record({
      user: principal.id,
      ...(principal.email !== undefined && { email: principal.email }),
      ...(principal.clientId !== undefined && { client: principal.clientId }),
      ...(pending.from !== undefined && { address: pending.from }),
      server,
      session,
      method: pending.method,
      ...(pending.audit.target !== undefined && { target: pending.audit.target }),
      outcome,
      ...(errorCode !== undefined && { errorCode }),
      durationMs: Math.round((this.options.clock.now() - pending.startedAt) * 10) / 10,
      ...(pending.audit.arguments !== undefined && { arguments: pending.audit.arguments }),
    });
  }

  #startTimer(id: RequestId, method: string): Deadline {
    const { timeoutMs, deadlines, timeoutSetting = "limits.requestTimeout" } = this.options;
    return deadlines.add(timeoutMs, () => {
      const pending = this.settle(id);
      if (!pending) return;
      this.record(pending, "timeout");
      const limit = `${timeoutMs / 1000}s (${timeoutSetting})`;
      this.options.onTimeout(pending, `the backend did not answer ${method} within ${limit}`);
    });
  }

  #auditDetails(request: RpcRequest): PendingRequest["audit"] {
    const audit = this.options.audit;
    if (!audit || !AUDITED_METHODS.has(request.method)) return undefined;
    const params = request.params as Record<string, unknown> | undefined;
    const target = request.method === "resources/read" ? params?.uri : params?.name;
    return {
      target: typeof target === "string" ? target.slice(0, 512) : undefined,
      arguments: audit.withArguments ? params?.arguments : undefined,
    };
  }
}
