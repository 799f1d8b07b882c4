/**
 * A 2026 client's retry, as answers to the 2025 backend's waiting requests: each
 * `inputResponses[key]` becomes the JSON-RPC response to the backend request asked under that
 * key. Unknown keys are ignored; keys not answered are asked again (a fresh `input_required`);
 * an answer of the wrong shape refuses the retry with -32602, and nothing reaches the backend.
 */
import type { RpcResponse } from "../protocol/jsonrpc.ts";
import { isObject, type Json } from "./json_shape.ts";
import type { AskedInput, InputRequest } from "./input_requests.ts";
import { ModernErrorCode } from "../protocol/protocol_versions.ts";

export type AnswerOutcome =
  /** Every asked key answered: send `responses` to the backend. */
  | { kind: "answered"; responses: RpcResponse[] }
  /**
   * Some keys answered (their `responses` go to the backend), the `missing` ones asked again
   * with `inputRequests`.
   */
  | {
    kind: "incomplete";
    responses: RpcResponse[];
    missing: AskedInput[];
    inputRequests: Record<string, InputRequest>;
  }
  /** The retry's answer to the client: -32602, with the key at fault in `data`. */
  | { kind: "malformed"; error: { code: number; message: string; data?: Json } };

/** The backend's answers from a retry's `inputResponses` (absent counts as none answered). */
export function answersForBackend(
  asked: readonly AskedInput[],
  inputResponses: unknown,
): AnswerOutcome {
  if (inputResponses !== undefined && !isObject(inputResponses)) {
    return malformed("params.inputResponses must be an object of answers by key");
  }
  const given = inputResponses ?? {};
  const responses: RpcResponse[] = [];
  const missing: AskedInput[] = [];
  for (const entry of asked) {
    if (!Object.hasOwn(given, entry.key)) {
      missing.push(entry);
      continue;
    }
    const problem = answerProblem(entry.request, given[entry.key]);
    if (problem) {
      return malformed(`params.inputResponses["${entry.key}"] ${problem}`, entry.key);
    }
    responses.push({ jsonrpc: "2.0", id: entry.backendId, result: given[entry.key] as Json });
  }
  if (missing.length === 0) return { kind: "answered", responses };
  const inputRequests = Object.fromEntries(missing.map((entry) => [entry.key, entry.request]));
  return { kind: "incomplete", responses, missing, inputRequests };
}

function malformed(message: string, key?: string): AnswerOutcome {
  const error = { code: ModernErrorCode.invalidParams, message: `${message}; fix it and retry` };
  return { kind: "malformed", error: key === undefined ? error : { ...error, data: { key } } };
}

const ACTIONS = ["accept", "decline", "cancel"];

/** What is wrong with an answer to `request`, as the end of a sentence; undefined if nothing. */
export function answerProblem(request: InputRequest, answer: unknown): string | undefined {
  if (!isObject(answer)) return "must be an object";
  switch (request.method) {
    case "elicitation/create":
      if (!ACTIONS.includes(answer.action as string)) {
        return 'must have "action" "accept", "decline" or "cancel"';
      }
      if ("content" in answer && !isElicitedContent(answer.content)) {
        return 'has a "content" that is not an object of strings, numbers, booleans or string lists';
      }
      return undefined;
    case "sampling/createMessage":
      if (answer.role !== "assistant" && answer.role !== "user") {
        return 'must have "role" "assistant" or "user"';
      }
      if (typeof answer.model !== "string") return 'must have a string "model"';
      if (!isObject(answer.content) && !Array.isArray(answer.content)) {
        return 'must have a "content" block or list of blocks';
      }
      return undefined;
    case "roots/list":
      if (!Array.isArray(answer.roots)) return 'must have a "roots" list';
      if (!answer.roots.every((root) => isObject(root) && typeof root.uri === "string")) {
        return 'has a root without a string "uri"';
      }
      return undefined;
  }
}

function isElicitedContent(content: unknown): boolean {
  if (!isObject(content)) return false;
  return Object.values(content).every((value) =>
    ["string", "number", "boolean"].includes(typeof value) ||
    (Array.isArray(value) && value.every((item) => typeof item === "string"))
  );
}
