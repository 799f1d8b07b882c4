/**
 * What a session's `initialize` settled, and how it failed: the client's capabilities (from its
 * request), the protocol version (from the backend's answer), and why the gateway could not
 * get the backend through it. A session continued from another replica starts from what the
 * handshake settled there.
 */
import { ASSUMED_PROTOCOL_VERSION } from "../protocol/protocol_versions.ts";
import type { RpcRequest, RpcResponse } from "../protocol/jsonrpc.ts";
import { failedBeforeInitialize } from "../backends/exit_words.ts";

/** What another process needs to know of a session's initialize to continue it. */
export interface Settled {
  protocolVersion: string;
  clientCapabilities: Record<string, unknown>;
}

export class Handshake {
  /** Protocol version agreed at initialize; 2025-03-26 until then (the spec's default). */
  protocolVersion: string;
  /** What the client said it can do, from its initialize request. */
  clientCapabilities: Record<string, unknown>;
  /**
   * Why the gateway itself could not get the backend through `initialize` (unreachable, exited,
   * timed out): the client is told the backend could not start, and gets no session.
   */
  failure?: string;

  constructor(settled?: Settled) {
    this.protocolVersion = settled?.protocolVersion ?? ASSUMED_PROTOCOL_VERSION;
    this.clientCapabilities = settled?.clientCapabilities ?? {};
  }

  /** The backend ended (`reason`) before it answered `initialize`; the first reason stays. */
  endedBeforeAnswer(reason: string): void {
    this.failure ??= failedBeforeInitialize(reason);
  }

  /** The client sent `initialize`. */
  requested(request: RpcRequest): void {
    this.clientCapabilities = (request.params?.capabilities as Record<string, unknown>) ?? {};
  }

  /**
   * The backend accepted `initialize`; returns the protocol version it agreed to, if it named
   * one. The gateway does not offer the spec's durable tasks (they would outlive the session
   * the gateway routes them by), so a backend's `tasks` capability is not passed on.
   */
  accepted(response: RpcResponse): string | undefined {
    const result = response.result as Record<string, unknown> | undefined;
    if (!result) return undefined;
    const capabilities = result.capabilities as Record<string, unknown> | undefined;
    if (capabilities && "tasks" in capabilities) delete capabilities.tasks;
    if (typeof result.protocolVersion !== "string") return undefined;
    this.protocolVersion = result.protocolVersion;
    return result.protocolVersion;
  }
}
