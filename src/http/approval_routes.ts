/**
 * The handlers of the approval pages (web/approvals/), which the route table in routes.ts
 * places: `/approvals`, `/approvals/{id}` and its POST. Without `oauth:` nobody can sign in to
 * decide, and the table answers these paths saying so.
 */
import type { Context } from "hono";
import type { Clock } from "../core/clock.ts";
import type { ClientId } from "../core/ids.ts";
import { httpError } from "../mcp/front/http_util.ts";
import type { ApprovalBoard } from "../mcp/approvals/approval_board.ts";
import type { ApprovalRecords } from "../mcp/approvals/approval_records.ts";
import type { ApprovalEvents } from "../mcp/approvals/call_hold.ts";
import { ApprovalFlow } from "../web/approvals/approval_flow.ts";
import type { GatewayEnv } from "./finish.ts";
import { type AuthServer, browserForm } from "./oauth_routes.ts";

type Page = (c: Context<GatewayEnv>) => Response | Promise<Response>;

export interface ApprovalPages {
  list: Page;
  page: Page;
  decide: Page;
}

/** What the pages share with the held calls (app_approvals.ts). */
export interface ApprovalParts {
  records: ApprovalRecords;
  board: ApprovalBoard;
  events: ApprovalEvents;
}

export const approvalsNeedOAuth: Page = () =>
  httpError(404, "not_found", "approvals need oauth: configured on this gateway");

export function approvalPages(
  auth: AuthServer | undefined,
  parts: ApprovalParts | undefined,
  clock: Clock,
): ApprovalPages | undefined {
  if (!auth || !parts) return undefined;
  const flow = new ApprovalFlow({
    issuer: auth.issuer,
    sso: auth.sso,
    loginFlow: auth.loginFlow,
    records: parts.records,
    board: parts.board,
    events: parts.events,
    clock,
    currentIdentity: auth.tokenDeps.currentIdentity,
    // The record holds the id a token carried, whatever kind (issued, configured, a URL).
    clientName: async (clientId) => (await auth.clients.find(clientId as ClientId))?.clientName,
  });
  return {
    list: (c) => flow.list(c.req.raw),
    page: (c) => flow.page(c.req.raw, c.req.param("id") ?? ""),
    decide: async (c) =>
      flow.decide(c.req.raw, c.req.param("id") ?? "", await browserForm(c.req.raw)),
  };
}
