/**
 * What the console reads that the gateway records as it runs, kept across reloads: the last
 * hour of calls per server and the latest audit events. Fed from the call recorder and the
 * tool-change report in app.ts; a few array writes per call.
 */
import type { Clock } from "./core/clock.ts";
import type { AuditEvent, ToolChangeAudit } from "./observability/audit.ts";
import { CallWindow } from "./observability/call_window.ts";
import { RecentEvents } from "./observability/recent_events.ts";

export interface ConsoleCarried {
  calls: CallWindow;
  events: RecentEvents;
  startedAt: number;
  /** When the TLS certificate served now expires; serve.ts sets it once HTTPS is up. */
  certificateExpiry?: () => number;
}

export function newConsoleCarried(clock: Clock): ConsoleCarried {
  return { calls: new CallWindow(), events: new RecentEvents(), startedAt: clock.now() };
}

export function noteCall(carried: ConsoleCarried, clock: Clock, event: AuditEvent): void {
  const now = clock.now();
  carried.calls.record(event.server, event.durationMs, event.outcome, now, event.errorCode);
  carried.events.add({
    at: now,
    kind: "call",
    person: event.email ?? event.user,
    server: event.server,
    what: event.target === undefined ? event.method : `${event.method} ${event.target}`,
    outcome: event.outcome,
    detail: {
      ...(event.client !== undefined && { client: event.client }),
      durationMs: event.durationMs,
      ...(event.errorCode !== undefined && { errorCode: event.errorCode }),
      ...(event.arguments !== undefined && { arguments: boundedArguments(event.arguments) }),
    },
  });
}

export function noteToolChange(carried: ConsoleCarried, clock: Clock, change: ToolChangeAudit) {
  carried.events.add({
    at: clock.now(),
    kind: "tool_change",
    server: change.server,
    what: `${change.change} tool ${change.tool}`,
    outcome: change.decision,
    detail: { digest: change.digest, changes: change.changes },
  });
}

/** The most of a call's arguments kept per event: 5,000 events stay within about 20 MB. */
export const KEPT_ARGUMENT_CHARS = 4_000;

/**
 * A call's arguments as the Audit page keeps them: as they are when small, else the start of
 * their JSON text (the page shows no more than that; the log line has them all).
 */
export function boundedArguments(value: unknown): unknown {
  let text: string;
  try {
    text = JSON.stringify(value) ?? "";
  } catch {
    return "(arguments that cannot be written as JSON)";
  }
  if (text.length <= KEPT_ARGUMENT_CHARS) return value;
  return `${text.slice(0, KEPT_ARGUMENT_CHARS)}… (${text.length.toLocaleString("en")} characters)`;
}
