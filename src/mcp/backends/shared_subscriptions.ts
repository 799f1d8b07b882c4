/**
 * Resource subscriptions of the sessions on one shared process (shared_process.ts): the process
 * hears one `resources/subscribe` per URI, when the first session wants it, and one
 * `resources/unsubscribe` when the last lets go; its updates reach only the sessions that want
 * them.
 */
import type { JSONRPCMessage } from "../../sdk.ts";
import { errorResponse, RpcErrorCode, type RpcRequest } from "../protocol/jsonrpc.ts";
import type { ProcessPort } from "./process_port.ts";

/** What becomes of a session's request on its way to the process, as subscriptions see it. */
export interface SubscriptionStep {
  /** Answered here: the process need not hear it (or must not). */
  answer?: JSONRPCMessage;
  /** A subscribe the process hears: taken back if the process refuses it. */
  subscribes?: string;
}

export class SharedSubscriptions {
  readonly #subscribers = new Map<string, Set<ProcessPort>>();

  /** True when the process must hear the subscription (the first session to want `uri`). */
  subscribe(port: ProcessPort, uri: string): boolean {
    if (port.subscriptions.has(uri)) return false;
    port.subscriptions.add(uri);
    let subscribers = this.#subscribers.get(uri);
    if (!subscribers) this.#subscribers.set(uri, subscribers = new Set());
    subscribers.add(port);
    return subscribers.size === 1;
  }

  /** True when the process must hear it (the last session wanting `uri` let go). */
  unsubscribe(port: ProcessPort, uri: string): boolean {
    if (!port.subscriptions.delete(uri)) return false;
    const subscribers = this.#subscribers.get(uri);
    subscribers?.delete(port);
    if (subscribers && subscribers.size > 0) return false;
    this.#subscribers.delete(uri);
    return true;
  }

  /**
   * `request` of `port`'s session: a subscribe or unsubscribe the process need not hear is
   * answered here; one without a string `uri` is refused here (-32602), since the process
   * counts each URI once for all its sessions and a URI it cannot name cannot be counted.
   */
  step(port: ProcessPort, request: RpcRequest): SubscriptionStep {
    const { method, id } = request;
    if (method !== "resources/subscribe" && method !== "resources/unsubscribe") return {};
    const uri = request.params?.uri;
    if (typeof uri !== "string") {
      const message = `${method} needs params.uri, the resource's URI as a string`;
      return { answer: errorResponse(id, RpcErrorCode.invalidParams, message) as JSONRPCMessage };
    }
    const done = { answer: { jsonrpc: "2.0", id, result: {} } as JSONRPCMessage };
    if (method === "resources/subscribe") {
      return this.subscribe(port, uri) ? { subscribes: uri } : done;
    }
    return this.unsubscribe(port, uri) ? {} : done;
  }

  /** The URIs the process must be told to forget now that `port`'s session left. */
  leave(port: ProcessPort): string[] {
    return [...port.subscriptions].filter((uri) => this.unsubscribe(port, uri));
  }

  /** The sessions that want updates of `uri`. */
  of(uri: unknown): Iterable<ProcessPort> {
    return (typeof uri === "string" ? this.#subscribers.get(uri) : undefined) ?? [];
  }
}
