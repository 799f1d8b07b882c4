/**
 * A 2026 backend's `input_required`, asked of a 2025 client: each embedded input request is
 * sent to the client as a real server-to-client request (input_relay.ts builds them), the
 * client's answers are collected as they come back through the session, and once every one
 * is in, the original request's retry params are made from them. A call given up meanwhile
 * (the client cancelled, the session timed it out) drops its questions; late answers are
 * ignored.
 */
import type { JSONRPCMessage } from "../../sdk.ts";
import {
  idKey,
  RpcErrorCode,
  type RpcNotification,
  type RpcResponse,
} from "../protocol/jsonrpc.ts";
import {
  clientRequestsFor2025,
  elicitationCompletions,
  type RetryOutcome,
  retryParams,
  type SentInput,
} from "../translate/input_relay.ts";
import type { Json } from "../translate/json_shape.ts";

/** What one round of questions came to. */
export interface RoundOutcome {
  outcome: RetryOutcome;
  /** To send the client once the retry has been answered (accepted URL elicitations). */
  completions: RpcNotification[];
}

interface Round {
  owner: object;
  sent: SentInput[];
  answers: RpcResponse[];
  settled: PromiseWithResolvers<boolean>;
}

export class InputRelay {
  /** Rounds waiting for the client, by the id of each request sent to it. */
  readonly #waiting = new Map<string, Round>();
  #next = 0;

  /** `deliver` sends a message to the client (through the session). */
  constructor(private readonly deliver: (message: JSONRPCMessage) => void) {}

  /**
   * Asks the client what `result` asks for, on behalf of `owner` (the call); resolves with the
   * retry, or undefined when the call was dropped before the client had answered.
   */
  async ask(owner: object, originalParams: Json, result: Json): Promise<RoundOutcome | undefined> {
    const { sent, unrelayable } = clientRequestsFor2025(
      result,
      () => `gatehouse-input-${++this.#next}`,
    );
    if (unrelayable.length > 0) {
      const error = {
        code: RpcErrorCode.methodNotFound,
        message: `the backend asked for input a 2025-11-25 client cannot be asked for (${
          unrelayable.join(", ")
        }): only elicitation/create, sampling/createMessage and roots/list cross`,
      };
      return { outcome: { kind: "failed", error }, completions: [] };
    }
    if (sent.length === 0) {
      return { outcome: retryParams(originalParams, result, [], []), completions: [] };
    }
    const round: Round = { owner, sent, answers: [], settled: Promise.withResolvers() };
    for (const entry of sent) this.#waiting.set(idKey(entry.request.id), round);
    for (const entry of sent) this.deliver(entry.request as JSONRPCMessage);
    if (!await round.settled.promise) return undefined;
    return {
      outcome: retryParams(originalParams, result, sent, round.answers),
      completions: elicitationCompletions(sent, round.answers),
    };
  }

  /** A response from the client: true when it answered one of the questions asked here. */
  answered(response: RpcResponse): boolean {
    const key = idKey(response.id);
    const round = this.#waiting.get(key);
    if (!round) return false;
    this.#waiting.delete(key);
    round.answers.push(response);
    if (round.answers.length === round.sent.length) round.settled.resolve(true);
    return true;
  }

  /** Forgets the questions of `owner`'s round (its call was given up). */
  drop(owner: object): void {
    for (const [key, round] of this.#waiting) {
      if (round.owner !== owner) continue;
      this.#waiting.delete(key);
      round.settled.resolve(false);
    }
  }

  /** Forgets every question (the connection ended). */
  dropAll(): void {
    for (const round of this.#waiting.values()) round.settled.resolve(false);
    this.#waiting.clear();
  }

  /** Questions the client has not answered yet. */
  get waiting(): number {
    return this.#waiting.size;
  }
}
