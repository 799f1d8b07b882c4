/**
 * A line of a shared process's output that cannot be passed on (past `limits.maxMessageBytes`,
 * or not JSON-RPC): on a process several sessions use, ending the process for it would end
 * everyone's calls, so the line is skipped and only the call it answered fails. Which call is
 * read from the line's ends as dropped_answers.ts reads a dropped SSE event: the `id` among the
 * first top-level keys, or ending the object (`…,"id":"gh-share-7"}`), and only from a line
 * that shows itself a response (a `result` or `error` key and no `method`), since a request of
 * the process's carries an id of its own numbering.
 */
import type { JSONRPCMessage } from "../../sdk.ts";
import { errorResponse, RpcErrorCode } from "../protocol/jsonrpc.ts";
import { headFields, tailId } from "./dropped_answers.ts";

/** The error answer in place of the skipped line, or undefined when no call can be named. */
export function answerInstead(
  head: string,
  tail: string,
  reason: string,
): JSONRPCMessage | undefined {
  const fields = headFields(head);
  const response = (fields.keys.has("result") || fields.keys.has("error")) &&
    !fields.keys.has("method");
  if (!response) return undefined;
  const id = fields.id ?? tailId(tail);
  if (id === undefined) return undefined;
  return errorResponse(id, RpcErrorCode.backendError, reason) as JSONRPCMessage;
}

/** The words for a line that is not JSON-RPC, for the one call it answered. */
export function unreadableAnswerMessage(why: string): string {
  return `the backend's answer could not be read (${why}); the backend's process goes on serving others`;
}
