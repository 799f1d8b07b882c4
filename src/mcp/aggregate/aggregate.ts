/**
 * An aggregate server, presented to its client session as if it were one backend (the SDK's
 * Transport interface): it initializes every member, lists their tools, prompts and resources
 * under namespaced names, and routes each call, cancellation, progress and server-to-client
 * request between the client and the member it belongs to.
 */
import type { AggregateServerConfig, BackendServerConfig } from "../../config/types.ts";
import type { Logger } from "../../observability/logger.ts";
import type { JSONRPCMessage, Transport } from "../../sdk.ts";
import { LATEST_SESSION_PROTOCOL_VERSION, negotiateProtocolVersion } from "../protocol_versions.ts";
import { VERSION } from "../../version.ts";
import type { Backend } from "../backends/connect.ts";
import { classify, idKey, type RequestId, RpcErrorCode, type RpcRequest } from "../jsonrpc.ts";
import type { DiscoveryCache } from "./cache.ts";
import { Discovery, withTimeout } from "./discovery.ts";
import { type ListKind, LISTS, page, unionCapabilities } from "./catalog.ts";
import { MemberError, type MemberInit, MemberLink } from "./member.ts";
import { credentialRpcError, supportsUrlElicitation } from "../credential_errors.ts";

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
  /** How long lists and connections may take before a member is left out. */
  discoveryTimeoutMs: number;
  /** A member that failed is tried again after this long. */
  retryAfterMs: number;
  now: () => number;
  logger: Logger;
}

/** Large, because some clients read only the first page; long lists still page. */
const PAGE_SIZE = 2_000;
const LIST_CHANGED: Record<string, ListKind[]> = {
  "notifications/tools/list_changed": ["tools"],
  "notifications/prompts/list_changed": ["prompts"],
  "notifications/resources/list_changed": ["resources", "resourceTemplates"],
};
const CHANGED_NOTICE: Record<ListKind, string> = {
  tools: "notifications/tools/list_changed",
  prompts: "notifications/prompts/list_changed",
  resources: "notifications/resources/list_changed",
  resourceTemplates: "notifications/resources/list_changed",
};

export class AggregateTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;

  readonly #options: AggregateOptions;
  readonly #links = new Map<string, MemberLink>();
  readonly #configs = new Map<string, BackendServerConfig>();
  /** Client request id → the member request carrying it, for cancellation. */
  readonly #inflight = new Map<string, { link: MemberLink; id: number }>();
  /** Ids the aggregate gave members' requests to the client → the member's own id. */
  readonly #relayed = new Map<string, { link: MemberLink; id: RequestId }>();
  readonly #discovery: Discovery;
  #init?: MemberInit;
  #initialized = false;
  #nextRelay = 1;
  #closed = false;
  readonly #stopListening: () => void;
  readonly #stopWatching: () => void;
  /** URL-mode elicitations handed to the client per member, completed when it is connected. */
  readonly #elicitations = new Map<string, string[]>();

  constructor(options: AggregateOptions) {
    this.#options = options;
    for (const config of options.members) {
      this.#configs.set(config.name, config);
      this.#links.set(
        config.name,
        new MemberLink(config.name, {
          connect: () => options.connect(config),
          now: options.now,
          logger: options.logger,
          handlers: {
            notification: (link, message) => this.#memberNotification(link, message),
            request: (link, id, method, params) => this.#memberRequest(link, id, method, params),
            down: (link, reason) => this.#memberDown(link, reason),
          },
        }),
      );
    }
    this.#discovery = new Discovery(this.#links, {
      cache: options.cache,
      scopeOf: (member) => options.scopeOf(this.#configs.get(member)!),
      delimiter: options.server.delimiter,
      discoveryTimeoutMs: options.discoveryTimeoutMs,
      logger: options.logger,
      ensure: (link) => this.#ensure(link),
    });
    this.#stopListening = options.cache.onInvalidate((member, kinds) => {
      if (!this.#links.has(member)) return;
      for (const kind of kinds) this.#discovery.forget(kind as ListKind);
      // Resources and templates share one notice: send each notice once.
      const notices = new Set(kinds.map((kind) => CHANGED_NOTICE[kind as ListKind]));
      for (const notice of notices) this.#tellClient(notice);
    });
    this.#stopWatching = options.watchCredentials?.((member) => this.#credentialChanged(member)) ??
      (() => {});
  }

  /** The person set or connected a member's credential: try it again now, tell the client. */
  #credentialChanged(member: string): void {
    const link = this.#links.get(member);
    if (!link || this.#closed) return;
    for (const elicitationId of this.#elicitations.get(member) ?? []) {
      this.#emit(
        {
          jsonrpc: "2.0",
          method: "notifications/elicitation/complete",
          params: { elicitationId },
        } as JSONRPCMessage,
      );
    }
    this.#elicitations.delete(member);
    if (link.state === "down" && link.credentialError) {
      link.downAt = 0;
      for (const kind of Object.keys(LISTS) as ListKind[]) this.#discovery.forget(kind);
      for (const notice of new Set(Object.values(CHANGED_NOTICE))) this.#tellClient(notice);
    }
  }

  /** Why a member cannot be used now, as the error its calls get. */
  #unavailable(link: MemberLink, suffix = ""): MemberError {
    if (link.credentialError) {
      const body = credentialRpcError(
        link.credentialError,
        supportsUrlElicitation(this.#init?.capabilities),
      );
      return new MemberError(body.code, body.message, body.data, link.name);
    }
    return new MemberError(
      RpcErrorCode.internalError,
      `the member "${link.name}" is unavailable: ${link.downReason}${suffix}`,
    );
  }

  /** URL elicitations the client was given, announced complete when the credential arrives. */
  #rememberElicitations(member: string, data: unknown): void {
    const given = (data as { elicitations?: { elicitationId: string }[] })?.elicitations ?? [];
    const ids = [...(this.#elicitations.get(member) ?? []), ...given.map((e) => e.elicitationId)];
    this.#elicitations.set(member, ids.slice(-10));
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
      this.#clientNotification(classified.message.method, classified.message.params);
    } else {
      const relay = this.#relayed.get(idKey(classified.message.id));
      if (relay) {
        this.#relayed.delete(idKey(classified.message.id));
        const { result, error } = classified.message;
        relay.link.respond(relay.id, error ? { error } : { result });
      }
    }
    return Promise.resolve();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopListening();
    this.#stopWatching();
    await Promise.all([...this.#links.values()].map((link) => link.close()));
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
      if (e.elicitingFor) this.#rememberElicitations(e.elicitingFor, e.data);
      this.#emit({
        jsonrpc: "2.0",
        id: request.id,
        error: { code: e.code, message: e.message, ...(e.data !== undefined && { data: e.data }) },
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
        return this.#list("tools", params.cursor);
      case "prompts/list":
        return this.#list("prompts", params.cursor);
      case "resources/list":
        return this.#list("resources", params.cursor);
      case "resources/templates/list":
        return this.#list("resourceTemplates", params.cursor);
      case "tools/call":
        return this.#routeByName(request, "tools", params);
      case "prompts/get":
        return this.#routeByName(request, "prompts", params);
      case "resources/read":
      case "resources/subscribe":
      case "resources/unsubscribe":
        return this.#routeByUri(request, params, params.uri);
      case "completion/complete":
        return this.#complete(request, params);
      case "logging/setLevel":
        return this.#setLevel(params);
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
    const requested = String(params.protocolVersion ?? "");
    this.#init = {
      protocolVersion: requested || LATEST_SESSION_PROTOCOL_VERSION,
      capabilities: (params.capabilities as Record<string, unknown>) ?? {},
      clientInfo: (params.clientInfo as Record<string, unknown>) ??
        { name: "unknown", version: "0" },
    };
    await Promise.all([...this.#links.values()].map((link) => this.#ensure(link).catch(() => {})));
    const ready = [...this.#links.values()].filter((link) => link.state === "ready");
    const instructions = ready.filter((l) => l.info?.instructions)
      .map((l) => `${l.name}: ${l.info!.instructions}`).join("\n\n");
    this.#initialized = true;
    return {
      protocolVersion: negotiateProtocolVersion(requested),
      capabilities: unionCapabilities(ready.map((link) => link.info!.capabilities)),
      serverInfo: { name: `gatehouse/${this.#options.server.name}`, version: VERSION },
      ...(instructions && { instructions }),
    };
  }

  /** Connects a member if it is not connected and has not failed too recently. */
  async #ensure(link: MemberLink): Promise<void> {
    if (link.state === "ready") return;
    if (link.state === "down" && this.#options.now() - link.downAt < this.#options.retryAfterMs) {
      throw this.#unavailable(link);
    }
    const wasDown = link.state === "down";
    const init = this.#init ?? {
      protocolVersion: LATEST_SESSION_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "gatehouse", version: VERSION },
    };
    try {
      await withTimeout(
        link.connect(init, this.#options.discoveryTimeoutMs),
        this.#options.discoveryTimeoutMs,
        `connecting to ${link.name}`,
      );
    } catch (error) {
      throw link.credentialError ? this.#unavailable(link) : error;
    }
    if (wasDown) {
      this.#options.logger.info("aggregate member is back", { member: link.name });
      this.#options.cache.invalidate(link.name, Object.keys(LISTS));
    }
  }

  async #list(kind: ListKind, cursor: unknown): Promise<Record<string, unknown>> {
    const merged = await this.#discovery.list(kind);
    const slice = page(merged.items, cursor, PAGE_SIZE);
    if (!slice) {
      throw new MemberError(
        RpcErrorCode.invalidParams,
        "the cursor is not one this aggregate gave out",
      );
    }
    return {
      [LISTS[kind].field]: slice.items,
      ...(slice.nextCursor && { nextCursor: slice.nextCursor }),
    };
  }

  async #routeByName(
    request: RpcRequest,
    kind: "tools" | "prompts",
    params: Record<string, unknown>,
  ) {
    const name = String(params.name ?? "");
    const route = await this.#discovery.route(kind, name);
    if (!route) {
      // A member that is down is left out of the lists; say so rather than "unknown".
      const owner = [...this.#links.values()].find((link) =>
        name.startsWith(`${link.name}${this.#options.server.delimiter}`)
      );
      if (owner && owner.state === "down") {
        throw this.#unavailable(owner, "; it is retried shortly");
      }
      const leftOut = owner && this.#discovery.leftOut.get(owner.name);
      if (leftOut) {
        throw new MemberError(
          RpcErrorCode.internalError,
          `the member "${owner.name}" is unavailable: ${leftOut}`,
        );
      }
      const what = kind === "tools" ? "tool" : "prompt";
      throw new MemberError(
        RpcErrorCode.invalidParams,
        `unknown ${what} "${name.slice(0, 200)}": list them again, a member may be unavailable`,
      );
    }
    return await this.#forward(request, this.#links.get(route.member)!, {
      ...params,
      name: route.name,
    });
  }

  async #routeByUri(request: RpcRequest, params: Record<string, unknown>, uri: unknown) {
    const link = await this.#discovery.ownerOfUri(uri);
    if (!link) {
      throw new MemberError(
        RpcErrorCode.invalidParams,
        `no member of this aggregate serves the resource ${String(uri).slice(0, 200)}`,
      );
    }
    return await this.#forward(request, link, params);
  }

  async #complete(request: RpcRequest, params: Record<string, unknown>) {
    const ref = (params.ref ?? {}) as Record<string, unknown>;
    if (ref.type === "ref/prompt") {
      const route = await this.#discovery.route("prompts", String(ref.name ?? ""));
      if (!route) {
        throw new MemberError(
          RpcErrorCode.invalidParams,
          `unknown prompt "${String(ref.name).slice(0, 200)}"`,
        );
      }
      return await this.#forward(request, this.#links.get(route.member)!, {
        ...params,
        ref: { ...ref, name: route.name },
      });
    }
    return await this.#routeByUri(request, params, ref.uri);
  }

  async #setLevel(params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const targets = [...this.#links.values()].filter((l) =>
      l.state === "ready" && l.info?.capabilities.logging
    );
    await Promise.allSettled(
      targets.map((link) =>
        link.request("logging/setLevel", params, this.#options.discoveryTimeoutMs)
      ),
    );
    return {};
  }

  async #forward(request: RpcRequest, link: MemberLink, params: Record<string, unknown>) {
    await this.#ensure(link);
    const started = link.start(request.method, params);
    const key = idKey(request.id);
    this.#inflight.set(key, { link, id: started.id });
    try {
      return await started.result;
    } finally {
      this.#inflight.delete(key);
    }
  }

  #clientNotification(method: string, params: Record<string, unknown> | undefined): void {
    if (method === "notifications/cancelled") {
      const requestId = params?.requestId as RequestId | undefined;
      const inflight = requestId === undefined ? undefined : this.#inflight.get(idKey(requestId));
      if (!inflight) return;
      inflight.link.notify("notifications/cancelled", { ...params, requestId: inflight.id });
      inflight.link.cancel(inflight.id, "cancelled by the client");
    } else if (method === "notifications/roots/list_changed") {
      for (const link of this.#links.values()) link.notify(method, params);
    }
  }

  #memberNotification(link: MemberLink, message: JSONRPCMessage): void {
    const { method, params } = message as { method: string; params?: Record<string, unknown> };
    const changed = LIST_CHANGED[method];
    if (changed) {
      this.#options.cache.invalidate(link.name, changed);
      return;
    }
    if (method === "notifications/cancelled") {
      for (const [aggregateId, relay] of this.#relayed) {
        if (relay.link === link && relay.id === params?.requestId) {
          this.#relayed.delete(aggregateId);
          this.#emit(
            {
              jsonrpc: "2.0",
              method,
              params: { ...params, requestId: aggregateId },
            } as JSONRPCMessage,
          );
        }
      }
      return;
    }
    this.#emit(message);
  }

  #memberRequest(link: MemberLink, id: RequestId, method: string, params: unknown): void {
    if (method === "ping") return link.respond(id, { result: {} });
    const aggregateId = `${this.#options.server.name}-${this.#nextRelay++}`;
    this.#relayed.set(idKey(aggregateId), { link, id });
    this.#emit(
      {
        jsonrpc: "2.0",
        id: aggregateId,
        method,
        ...(params !== undefined && { params }),
      } as JSONRPCMessage,
    );
  }

  #memberDown(link: MemberLink, reason: string): void {
    if (this.#closed) return;
    this.#options.logger.warn("aggregate member stopped", { member: link.name, reason });
    for (const [key, relay] of this.#relayed) if (relay.link === link) this.#relayed.delete(key);
    const capabilities = link.info?.capabilities ?? {};
    for (const kind of ["tools", "prompts", "resources"] as ListKind[]) {
      this.#discovery.forget(kind);
      if (capabilities[LISTS[kind].capability]) this.#tellClient(CHANGED_NOTICE[kind]);
    }
  }

  #tellClient(method: string): void {
    if (this.#initialized && !this.#closed) {
      this.#emit({ jsonrpc: "2.0", method } as JSONRPCMessage);
    }
  }

  #emit(message: JSONRPCMessage): void {
    if (!this.#closed) this.onmessage?.(message);
  }
}
