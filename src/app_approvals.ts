/**
 * The approvals part of the gateway, wired for app.ts: the shared records, the board that wakes
 * waiting calls, the audit lines and metric, the `notify:` webhook through the SSRF guard, and
 * the tool definitions rules judge `when: destructive` by (tool integrity's approved ones).
 */
import type { ResolvedConfig } from "./config/types.ts";
import type { Clock } from "./core/clock.ts";
import { ApprovalBoard } from "./mcp/approvals/approval_board.ts";
import { approvalEvents } from "./mcp/approvals/approval_events.ts";
import { type ApprovalRecord, ApprovalRecords } from "./mcp/approvals/approval_records.ts";
import { CallHolds } from "./mcp/approvals/call_hold.ts";
import { ToolLedger } from "./mcp/tools/tool_ledger.ts";
import { guardedPostJson } from "./net/guarded_fetch.ts";
import type { Revocations } from "./oauth/revocations.ts";
import type { Logger } from "./observability/logger.ts";
import type { GatewayMetrics } from "./observability/metrics.ts";
import type { Store } from "./store/store.ts";
import type { ApprovalParts as PageParts } from "./http/approval_routes.ts";
import { isObject } from "./mcp/translate/json_shape.ts";

/** What the pages and the sessions share of approvals. */
export interface ApprovalParts extends PageParts {
  holds: CallHolds;
}

export function approvalParts(
  config: ResolvedConfig,
  deps: {
    store: Store;
    clock: Clock;
    logger: Logger;
    auditLogger?: Logger;
    metrics: GatewayMetrics;
    revocations?: Revocations;
  },
  previous?: { approvals: ApprovalParts },
): ApprovalParts {
  const { store, clock, logger, metrics, revocations } = deps;
  const carried = previous?.approvals;
  // The tool definitions `when: destructive` reads, as tool integrity approved them.
  const ledger = new ToolLedger(store, clock, config.limits.heldToolRetentionMs);
  const records = carried?.records ?? new ApprovalRecords(store, clock);
  // Kept across reloads: calls waiting now keep waiting on the same board.
  const board = carried?.board ?? new ApprovalBoard(records, clock);
  const events = approvalEvents(deps.auditLogger ?? logger, metrics.approvals);
  const allowPrivateHosts = config.oauth?.clientMetadataDocuments.allowPrivateHosts ?? [];
  const notify = (url: string, record: ApprovalRecord, page: string) => {
    // Never the arguments: a webhook's receiver is not who the caller shared them with.
    const notice = {
      type: "gatehouse.approval_requested",
      approval: record.id,
      url: page,
      server: record.server,
      tool: record.tool,
      requestedBy: record.person.email ?? record.person.id,
      expiresAt: new Date(record.expiresAt).toISOString(),
    };
    guardedPostJson(url, notice, { allowPrivateHosts, timeoutMs: 10_000, maxBytes: 0 }, clock)
      .catch((error) =>
        logger.warn("could not notify of a held call", {
          approval: record.id,
          webhook: new URL(url).host,
          error: String(error),
        })
      );
  };
  const holds = new CallHolds({
    records,
    board,
    clock,
    baseUrl: config.baseUrl,
    perUser: config.limits.pendingApprovalsPerUser,
    maxMessageBytes: config.limits.maxMessageBytes,
    servers: config.servers,
    definition: async (server, tool) => {
      const definition = (await ledger.record(server, tool))?.approved?.definition;
      return isObject(definition) ? definition : undefined;
    },
    revoked: revocations && ((grant) => revocations.has(grant)),
    events,
    notify,
  });
  return { records, board, events, holds };
}
