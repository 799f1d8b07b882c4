/**
 * Each step of an approval's life as one audit line (`msg: "audit"`, `event: "approval_…"`,
 * with the approval id, who asked, who decided) and one count of `gatehouse_approvals_total`.
 * Never the arguments: the audit has its own switch for those, and a held call's are on its page.
 */
import type { Counter } from "../../observability/metrics.ts";
import type { Logger } from "../../observability/logger.ts";
import type { ApprovalEvents } from "./call_hold.ts";
import type { ApprovalRecord } from "./approval_records.ts";

export type ApprovalOutcome = keyof ApprovalEvents;

export function approvalEvents(logger: Logger, counter: Counter): ApprovalEvents & {
  say(outcome: ApprovalOutcome, record: ApprovalRecord): void;
} {
  const say = (outcome: ApprovalOutcome, record: ApprovalRecord) => {
    counter.inc({ server: record.server, outcome });
    logger.info("audit", {
      event: `approval_${outcome}`,
      approval: record.id,
      user: record.person.id,
      ...(record.person.email && { email: record.person.email }),
      ...(record.client && { client: record.client }),
      server: record.server,
      ...(record.member && { member: record.member }),
      tool: record.tool,
      ...(record.decidedBy && { decidedBy: record.decidedBy }),
      ...(record.endedBecause && { because: record.endedBecause }),
    });
  };
  return {
    say,
    requested: (record) => say("requested", record),
    approved: (record) => say("approved", record),
    denied: (record) => say("denied", record),
    expired: (record) => say("expired", record),
    executed: (record) => say("executed", record),
    ended: (record) => say("ended", record),
  };
}
