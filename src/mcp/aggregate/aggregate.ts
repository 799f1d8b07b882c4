/**
 * An aggregate server, presented to its client session as if it were one backend (the SDK's
 * Transport interface): it takes each message from the client to the part that handles it
 * (initialize and the members' connections in members.ts, lists in lists.ts, calls in
 * routing.ts, everything else in relay.ts) and answers each request.
 */
import type { AggregateServerConfig, BackendServerConfig } from "../../config/types.ts";
import type { Clock } from "../../core/clock.ts";
import type { Deadlines } from "../../core/deadlines.ts";
import type { Logger } from "../../observability/logger.ts";
import type { JSONRPCMessage, Transport } from "../../sdk.ts";
import type { Backend } from "../backends/connect.ts";
import { classify, RpcErrorCode, type RpcRequest } from "../protocol/jsonrpc.ts";
import type { DiscoveryCache } from "./cache.ts";
import { Discovery } from "./discovery.ts";
import { listPage } from "./lists.ts";
import { MemberError } from "./member.ts";
import { Members } from "./members.ts";
import { Relay } from "./relay.ts";
import { Router } from "./routing.ts";

export interface AggregateOptions {
  server: AggregateServerConfig;
  members: BackendServerConfig[];
  connect(member: BackendServerConfig): Backend | Promise<Backend>;
  /**
   * Tells when the person's credential for a member changes in this process, so a member
   * left out for want of one is tried again at once; returns how to stop listening.
   */
  watchCredentials?(listener: (member: string) => void): () => void;
  cache: DiscoveryCache;
  /** "*" when a member's lists are the same for everyone, else the person's id. */
  scopeOf(member: BackendServerConfig): string;
  /** The member's tools the session's caller may use; all when absent (discovery.ts). */
  memberTools?(member: string, tools: Record<string, unknown>[]): Record<string, unknown>[];
  /**
   * How long a call routed to `member` may take before it fails (its own requestTimeout);
   * undefined: as long as the session around the aggregate waits.
   */
  callTimeoutMs?(member: BackendServerConfig): number | undefined;
  /** How long lists and connections may take before a member is left out. */
  discoveryTimeoutMs: number;
  /** A member that failed is tried again after this long. */
  retryAfterMs: number;
  /** The gateway's time: members' back-off is measured on it. */
  clock: Clock;
  /** Members' request and discovery timeouts, on the gateway's one deadline timer. */
  deadlines: Deadlines;
  logger: Logger;
}

export class AggregateTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;

  readonly #members: Members;
  readonly #discovery: Discovery;
  readonly #router: Router;
  readonly #relay: Relay;
  #closed = false;
  readonly #stopListening: () => void;
  readonly #stopWatching: () => void;

  constructor(options: AggregateOptions) {
    this.#members = new Members({
      ...options,
      handlers: {
        notification: (link, message) => this.#relay.memberNotification(link, message),
        request: (link, id, method, params) => this.#relay.memberRequest(link, id, method, params),
        down: (link, reason) => this.#relay.memberDown(link, reason),
      },
    });
    this.#discovery = new Discovery(this.#members.links, {
      cache: options.cache,
      // A member may list more to a client that can do more (sampling, elicitation, an App
      // host): lists are shared only between clients that declared the same capabilities.
      scopeOf: (member) =>
        `${options.scopeOf(this.#members.config(member))}|${this.#members.capabilityKey()}`,
      delimiter: options.server.delimiter,
      discoveryTimeoutMs: options.discoveryTimeoutMs,
      deadlines: options.deadlines,
      logger: options.logger,
      ensure: (link) => this.#members.ensure(link),
      memberTools: options.memberTools,
    });
    this.#router = new Router({
      members: this.#members,
      discovery: this.#discovery,
      callTimeoutMs: (member) => options.callTimeoutMs?.(this.#members.config(member)),
      discoveryTimeoutMs: options.discoveryTimeoutMs,
    });
    this.#relay = new Relay({
      serverName: options.server.name,
      members: this.#members,
      discovery: this.#discovery,
      cache: options.cache,
      scopeOf: (member) => options.scopeOf(this.#members.config(member)),
      logger: options.logger,
      emit: (message) => this.#emit(message),
      closed: () => this.#closed,
    });
    // Only changes in this session's scope: one person's member changing is not another's news.
    this.#stopListening = options.cache.onInvalidate((member, kinds, scope) => {
      if (!this.#members.links.has(member)) return;
      if (scope === options.scopeOf(this.#members.config(member))) {
        this.#relay.listsChanged(member, kinds);
      }
    });
    this.#stopWatching =
      options.watchCredentials?.((member) => this.#relay.credentialChanged(member)) ?? (() => {});
  }

  start(): Promise<void> {
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    const classified = classify(message);
    if (!classified || this.#closed) return Promise.resolve();
    if (classified.kind === "request") {
      // Answered when ready; the session's own timer bounds how long the client waits.
      void this.#answer(classified.message);
    } else if (classified.kind === "notification") {
      const { method, params } = classified.message;
      if (method === "notifications/cancelled") this.#router.cancelled(params);
      else this.#relay.clientNotification(method, params);
    } else {
      this.#relay.clientResponse(classified.message);
    }
    return Promise.resolve();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopListening();
    this.#stopWatching();
    await this.#members.close();
    this.onclose?.();
  }

  async #answer(request: RpcRequest): Promise<void> {
    try {
      const result = await this.#dispatch(request);
      this.#emit({ jsonrpc: "2.0", id: request.id, result } as JSONRPCMessage);
    } catch (error) {
      const e = error instanceof MemberError
        ? error
        : new MemberError(RpcErrorCode.internalError, (error as Error).message);
      if (e.elicitingFor) this.#relay.rememberElicitations(e.elicitingFor, e.data);
      this.#emit({
        jsonrpc: "2.0",
        id: request.id,
        error: {
          code: e.rpcCode,
          message: e.message,
          ...(e.data !== undefined && { data: e.data }),
        },
      } as JSONRPCMessage);
    }
  }

  #dispatch(request: RpcRequest): Promise<Record<string, unknown>> {
    const params = (request.params ?? {}) as Record<string, unknown>;
    switch (request.method) {
      case "initialize":
        return this.#initialize(params);
      case "ping":
        return Promise.resolve({});
      case "tools/list":
        return listPage(this.#discovery, "tools", params.cursor);
      case "prompts/list":
        return listPage(this.#discovery, "prompts", params.cursor);
      case "resources/list":
        return listPage(this.#discovery, "resources", params.cursor);
      case "resources/templates/list":
        return listPage(this.#discovery, "resourceTemplates", params.cursor);
      case "tools/call":
        return this.#router.byName(request, "tools", params);
      case "prompts/get":
        return this.#router.byName(request, "prompts", params);
      case "resources/read":
      case "resources/subscribe":
      case "resources/unsubscribe":
        return this.#router.byUri(request, params, params.uri);
      case "completion/complete":
        return this.#router.complete(request, params);
      case "logging/setLevel":
        return this.#router.setLevel(params);
      default:
        return Promise.reject(
          new MemberError(
            RpcErrorCode.methodNotFound,
            `method ${request.method} is not supported by this aggregate`,
          ),
        );
    }
  }

  async #initialize(params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const result = await this.#members.initialize(params);
    this.#relay.clientInitialized();
    return result;
  }

  #emit(message: JSONRPCMessage): void {
    if (!this.#closed) this.onmessage?.(message);
  }
}
