/**
 * What a client hears about a held call, as JSON-RPC: the page to approve it on (a URL-mode
 * elicitation for clients that can open URLs, otherwise an error naming the page, the way a
 * missing credential is told: credential_errors.ts), and the ends without a run
 * (`approval_denied`, `approval_expired`).
 */
import type { JSONRPCMessage } from "../../sdk.ts";
import { errorResponse, type RequestId, RpcErrorCode } from "../protocol/jsonrpc.ts";
import type { ApprovalRecord } from "./approval_records.ts";

export type ApprovalEnd = "approval_denied" | "approval_expired";

/** The page where `record` is decided. */
export function approvalUrl(baseUrl: string, id: string): string {
  return `${baseUrl.replace(/\/$/, "")}/approvals/${id}`;
}

function asking(record: ApprovalRecord): string {
  return record.by === "caller"
    ? "you must approve it"
    : "someone the gateway's configuration names must approve it";
}

/** The message of the elicitation that sends the person to the page. */
export function elicitationMessage(record: ApprovalRecord): string {
  return `The call of ${record.tool} on ${record.server} waits for approval: ${asking(record)}.`;
}

/** For a client that cannot open URLs: the page named, and what to do after. */
export function approvalRequired(
  id: RequestId,
  record: ApprovalRecord,
  url: string,
): JSONRPCMessage {
  return errorResponse(
    id,
    RpcErrorCode.backendError,
    `this call of ${record.tool} waits for approval (${asking(record)}): open ${url}, then send ` +
      "the same call with the same arguments again",
    { reason: "approval_required", approval: record.id, url },
  ) as JSONRPCMessage;
}

export function approvalEnded(
  id: RequestId,
  record: ApprovalRecord,
  end: ApprovalEnd,
  why?: string,
): JSONRPCMessage {
  const text = end === "approval_denied"
    ? `the call of ${record.tool} was not approved${why ? ` (${why})` : ""}; it did not run`
    : `the call of ${record.tool} was not approved in time; it did not run. Call again to ask anew`;
  return errorResponse(id, RpcErrorCode.backendError, text, {
    reason: end,
    approval: record.id,
  }) as JSONRPCMessage;
}

export function approvalRefused(id: RequestId, message: string): JSONRPCMessage {
  return errorResponse(id, RpcErrorCode.backendError, message, {
    reason: "approval_refused",
  }) as JSONRPCMessage;
}
