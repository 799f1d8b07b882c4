/**
 * The SSE streams of a 2025 Streamable HTTP backend session (legacy_http.ts): a POST's answer
 * and the GET streams (legacy_http_listen.ts). Every message passes on in order, each checked
 * for shape (`classify`); the responses a POST awaits are crossed off as they come, and those
 * still owed when its stream ends for good are answered with an error saying why, so no
 * request waits for its timeout on an answer that cannot come.
 */
import type { SecretMask } from "../../observability/mask.ts";
import type { JSONRPCMessage } from "../../sdk.ts";
import {
  classify,
  errorResponse,
  idKey,
  RpcErrorCode,
  whyNotJsonRpc,
} from "../protocol/jsonrpc.ts";
import { answerTooLargeMessage } from "./bounded_answers.ts";
import { type AnswerLimits, BackendAnswerError, readEvents } from "./legacy_http_answers.ts";
import { type Awaiting, Listener, type ListenOptions } from "./legacy_http_listen.ts";
import { SseEventReader } from "./sse_answers.ts";

export interface StreamOptions extends Pick<ListenOptions, "clock" | "reconnection" | "open"> {
  limits: AnswerLimits;
  /** What never appears in the words of an error made here. */
  mask: SecretMask;
  deliver(message: JSONRPCMessage): void;
  /** Told what went wrong on a stream (not called once the transport has closed). */
  report(error: Error): void;
  closed(): boolean;
}

export class EventStreams {
  readonly #options: StreamOptions;
  readonly #listener: Listener;

  constructor(options: StreamOptions) {
    this.#options = options;
    this.#listener = new Listener({
      clock: options.clock,
      reconnection: options.reconnection,
      open: options.open,
      read: (response, events, awaiting) => this.#read(response, events, awaiting, false),
      fail: (awaiting, why) => this.#fail(awaiting, why),
      report: (error) => this.#report(error),
      closed: options.closed,
    });
  }

  /** Opens the standalone GET stream (the session is initialized). */
  listen(): void {
    this.#listener.listen();
  }

  /** Stops reconnecting; the streams themselves end with the transport's requests. */
  stop(): void {
    this.#listener.stop();
  }

  /**
   * A POST's SSE answer, read as it comes. The promise settles at its first event, so that a
   * stream that breaks before saying anything fails the POST itself (the session's words for
   * a failed send); a stream that ends later with responses owed fails what is owed.
   */
  answered(response: Response, awaiting: Awaiting): Promise<void> {
    const events = new SseEventReader();
    const first = Promise.withResolvers<void>();
    let spoke = false;
    this.#read(response, events, awaiting, true, () => {
      if (!spoke) first.resolve();
      spoke = true;
    }).then(
      () => this.#answerEnded(events, awaiting, spoke, first),
      (error) => this.#answerEnded(events, awaiting, spoke, first, error),
    );
    return first.promise;
  }

  #answerEnded(
    events: SseEventReader,
    awaiting: Awaiting,
    spoke: boolean,
    first: PromiseWithResolvers<void>,
    error?: Error,
  ): void {
    this.#listener.noteRetry(events.retry);
    const broke = () => {
      if (error && spoke) this.#report(new Error(`SSE stream disconnected: ${error}`));
    };
    if (awaiting.size === 0 || this.#options.closed()) {
      broke();
      return error && !spoke ? first.reject(error) : first.resolve();
    }
    if (events.lastEventId) {
      // The server closed the stream on purpose (SEP-1699) or lost it: the answers still to
      // come are asked for again, after the last event seen.
      if (error) this.#report(new Error(`SSE stream disconnected: ${error}`));
      this.#listener.resume(events.lastEventId, awaiting);
      return first.resolve();
    }
    const why = error
      ? `could not reach the backend: ${error.message}`
      : "the backend ended its answer without responding";
    if (!spoke) return first.reject(error ?? new BackendAnswerError(why));
    broke();
    this.#fail(awaiting, why);
  }

  /**
   * Reads one stream to its end. An oversized event in a POST's answer fails the requests it
   * answers (nothing says which of them it was for) and ends the stream; on a GET stream it is
   * dropped, and the stream goes on (bounded_answers.ts does the same for other transports).
   */
  #read(
    response: Response,
    events: SseEventReader,
    awaiting: Awaiting | undefined,
    answering: boolean,
    heard?: () => void,
  ): Promise<void> {
    const { limits } = this.#options;
    return readEvents(response, limits, events, {
      event: (event) => {
        if (event.event !== "" && event.event !== "message") return;
        this.#receive(event.data, awaiting);
        heard?.();
      },
      oversized: () => {
        const message = answerTooLargeMessage(limits.maxMessageBytes);
        if (!answering) {
          limits.onOversized?.(`dropped an event from the backend: ${message}`);
          return false;
        }
        limits.onOversized?.(message);
        this.#fail(awaiting!, message);
        heard?.();
        return true;
      },
    });
  }

  #receive(data: string, awaiting: Awaiting | undefined): void {
    try {
      const message: unknown = JSON.parse(data);
      const classified = classify(message);
      if (!classified) {
        const why = whyNotJsonRpc(message);
        throw new BackendAnswerError(`the backend sent an event that is not JSON-RPC 2.0: ${why}`);
      }
      if (classified.kind === "response") awaiting?.delete(idKey(classified.message.id));
      this.#options.deliver(message as JSONRPCMessage);
    } catch (error) {
      this.#report(error as Error);
    }
  }

  /** Answers each request still awaited with an error saying why no answer will come. */
  #fail(awaiting: Awaiting, why: string): void {
    const text = this.#options.mask.mask(why);
    for (const id of awaiting.values()) {
      this.#options.deliver(errorResponse(id, RpcErrorCode.backendError, text));
    }
    awaiting.clear();
  }

  #report(error: Error): void {
    if (!this.#options.closed()) this.#options.report(error);
  }
}
