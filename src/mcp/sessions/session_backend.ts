/**
 * A session's end of its backend connection: messages out, messages and failures in, and the
 * two ways to stop (end the backend session, or leave it running for whoever continues it).
 * Failures become words for the client: the last error before the connection closed, a backend
 * that dropped the session, a request that could not be handed over.
 */
import type { Logger } from "../../observability/logger.ts";
import type { JSONRPCMessage } from "../../sdk.ts";
import type { Backend } from "../backends/connect.ts";
import { type RequestId, RpcErrorCode } from "../protocol/jsonrpc.ts";
import { CredentialRequiredError } from "../../core/credential_required.ts";
import {
  credentialRpcError,
  type RpcErrorBody,
  supportsUrlElicitation,
} from "../protocol/credential_errors.ts";
import { AnswerTooLargeError } from "../backends/bounded_answers.ts";
import { BackendAnswerError } from "../backends/legacy_http_answers.ts";
import { BackendProcessEnded } from "../backends/stdio.ts";

/** What the session hears from its backend connection. */
export interface BackendEvents {
  message(message: JSONRPCMessage): void;
  /** The connection is over, or of no more use; `reason` says why, for the client. */
  ended(reason: string): void;
  /** True once the session has ended: what the connection reports then is no error. */
  sessionEnded(): boolean;
}

export class SessionBackend {
  #lastError?: string;
  #gone = false;

  constructor(
    private readonly backend: Backend,
    private readonly logger: Logger,
    events: BackendEvents,
  ) {
    const transport = backend.transport;
    transport.onmessage = (message) => events.message(message);
    transport.onerror = (error) => this.#error(error, events);
    transport.onclose = () => events.ended(this.#lastError ?? "the backend closed the connection");
  }

  /** The backend said the session it held is gone (HTTP 404): the client must start anew. */
  get gone(): boolean {
    return this.#gone;
  }

  /** The backend's session id, when another process could continue this session. */
  get sharedSessionId(): string | undefined {
    return this.backend.sharedSessionId?.();
  }

  /** Whether another process could continue this backend connection at all. */
  get continuable(): boolean {
    return this.backend.continuable?.() ?? true;
  }

  /** Whether the backend speaks 2026-07-28 (known once initialize has been answered). */
  get speaksModern(): boolean {
    return this.backend.speaksModern?.() ?? false;
  }

  async start(): Promise<void> {
    await this.backend.transport.start();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.backend.transport.send(message);
  }

  /** Tells the backend to stop working on request `id` (it need not hear it). */
  cancel(id: RequestId, reason: string): void {
    this.send(
      {
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: id, reason },
      } as JSONRPCMessage,
    ).catch(() => {});
  }

  /** The protocol version initialize settled, for the transport's later requests. */
  agreed(protocolVersion: string): void {
    this.backend.transport.setProtocolVersion?.(protocolVersion);
  }

  /** Ends the backend session (a stdio child exits, an HTTP backend gets its DELETE). */
  close(): Promise<void> {
    return this.backend.close();
  }

  /** Lets go of the connection and leaves the backend session to whoever continues it. */
  detach(): Promise<void> {
    return this.backend.detach();
  }

  #error(error: Error, events: BackendEvents): void {
    // Ending the session aborts the backend's streams, and they report that here: not an error.
    if (events.sessionEnded()) return;
    if (this.backend.sessionGone?.(error)) {
      this.#gone = true;
      this.logger.info("the backend ended the session", { error: error.message });
      events.ended("the backend ended the session");
      return;
    }
    // HTTP client transports report recoverable hiccups here too (a stream reconnecting);
    // only stdio errors are fatal, and the stdio backend closes itself after reporting.
    this.logger.warn("backend error", { error: error.message });
    this.#lastError = error.message;
  }
}

/** Why a request could not be handed to the backend, in words that point at the cause. */
export function sendFailure(error: unknown, method: string): string {
  const message = error instanceof Error ? error.message : String(error);
  // Said as when the process ends while a request waits, whichever the backend showed first.
  if (error instanceof BackendProcessEnded) return `${message} before answering ${method}`;
  if (error instanceof SyntaxError) return `the backend's answer is not valid JSON: ${message}`;
  // The backend was reached; its answer was refused (limits.maxMessageBytes, or its shape).
  if (error instanceof AnswerTooLargeError || error instanceof BackendAnswerError) return message;
  return `could not reach the backend: ${message}`;
}

/**
 * The error a client gets for a request that could not be handed to the backend: where to add a
 * missing credential (a URL-mode elicitation error for clients that can open URLs), otherwise
 * `sendFailure`'s words. `handshakeFailure` says why initialize failed, when it was that.
 */
export function failedSendAnswer(
  error: unknown,
  method: string,
  clientCapabilities: Record<string, unknown>,
): RpcErrorBody & { handshakeFailure?: string } {
  if (error instanceof CredentialRequiredError) {
    return credentialRpcError(error, supportsUrlElicitation(clientCapabilities));
  }
  const why = sendFailure(error, method);
  return { code: RpcErrorCode.backendError, message: why, handshakeFailure: why };
}
