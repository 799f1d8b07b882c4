/**
 * Everything between the client and the members that is not a call and its answer: members'
 * notifications (progress, logging, list_changed), their server-to-client requests (sampling,
 * elicitation, roots) under ids of the aggregate's own and the client's answers back, the
 * client's roots notice, and the notices a member's fall or new credential calls for.
 */
import type { Logger } from "../../observability/logger.ts";
import type { JSONRPCMessage } from "../../sdk.ts";
import { idKey, type RequestId, type RpcResponse } from "../protocol/jsonrpc.ts";
import type { DiscoveryCache } from "./cache.ts";
import { type ListKind, LISTS } from "./catalog.ts";
import type { Discovery } from "./discovery.ts";
import { CHANGED_NOTICE, LIST_CHANGED } from "./lists.ts";
import type { MemberLink } from "./member.ts";
import type { Members } from "./members.ts";
import { aggregateUiUri, isUiUri } from "../protocol/mcp_apps.ts";

export interface RelayOptions {
  /** Prefix of the ids the aggregate gives members' requests to the client. */
  serverName: string;
  members: Members;
  discovery: Discovery;
  cache: DiscoveryCache;
  /** The member's scope in the cache: "*", or this session's person's (aggregate.ts). */
  scopeOf(member: string): string;
  logger: Logger;
  /** Hands a message to the client; does nothing once the aggregate is closed. */
  emit(message: JSONRPCMessage): void;
  closed(): boolean;
}

export class Relay {
  /** Ids the aggregate gave members' requests to the client → the member's own id. */
  readonly #relayed = new Map<string, { link: MemberLink; id: RequestId }>();
  /** URL-mode elicitations handed to the client per member, completed when it is connected. */
  readonly #elicitations = new Map<string, string[]>();
  #nextRelay = 1;
  /** Notices wait for the client's initialize: before it, nothing was listed to change. */
  #initialized = false;

  constructor(private readonly options: RelayOptions) {}

  clientInitialized(): void {
    this.#initialized = true;
  }

  /** The client's answer to a member's request, sent to that member under its own id. */
  clientResponse(response: RpcResponse): void {
    const relay = this.#relayed.get(idKey(response.id));
    if (!relay) return;
    this.#relayed.delete(idKey(response.id));
    const { result, error } = response;
    relay.link.respond(relay.id, error ? { error } : { result });
  }

  /** A client notification other than a cancellation (which belongs to its call). */
  clientNotification(method: string, params: Record<string, unknown> | undefined): void {
    if (method === "notifications/roots/list_changed") {
      for (const link of this.options.members.links.values()) link.notify(method, params);
    }
  }

  memberNotification(link: MemberLink, message: JSONRPCMessage): void {
    const { method, params } = message as { method: string; params?: Record<string, unknown> };
    const changed = LIST_CHANGED[method];
    if (changed) {
      // Through the cache, so every session of the aggregate in the member's scope hears it (see
      // listsChanged): everyone for a shared member, only this person for their own.
      this.options.cache.invalidate(link.name, changed, this.options.scopeOf(link.name));
      return;
    }
    if (method === "notifications/cancelled") {
      for (const [aggregateId, relay] of this.#relayed) {
        if (relay.link === link && relay.id === params?.requestId) {
          this.#relayed.delete(aggregateId);
          this.options.emit(
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
    if (method === "notifications/resources/updated" && isUiUri(params?.uri)) {
      // An App's resource changed: named as the aggregate names it.
      const uri = aggregateUiUri(link.name, params.uri);
      this.options.emit({ jsonrpc: "2.0", method, params: { ...params, uri } } as JSONRPCMessage);
      return;
    }
    this.options.emit(message);
  }

  memberRequest(link: MemberLink, id: RequestId, method: string, params: unknown): void {
    if (method === "ping") return link.respond(id, { result: {} });
    const aggregateId = `${this.options.serverName}-${this.#nextRelay++}`;
    this.#relayed.set(idKey(aggregateId), { link, id });
    this.options.emit(
      {
        jsonrpc: "2.0",
        id: aggregateId,
        method,
        ...(params !== undefined && { params }),
      } as JSONRPCMessage,
    );
  }

  memberDown(link: MemberLink, reason: string): void {
    if (this.options.closed()) return;
    this.options.logger.warn("aggregate member stopped", { member: link.name, reason });
    for (const [key, relay] of this.#relayed) if (relay.link === link) this.#relayed.delete(key);
    const capabilities = link.info?.capabilities ?? {};
    for (const kind of ["tools", "prompts", "resources"] as ListKind[]) {
      this.options.discovery.forget(kind);
      if (capabilities[LISTS[kind].capability]) this.#tellClient(CHANGED_NOTICE[kind]);
    }
  }

  /** The shared cache dropped some of a member's lists (in this session or another). */
  listsChanged(member: string, kinds: string[]): void {
    if (!this.options.members.links.has(member)) return;
    for (const kind of kinds) this.options.discovery.forget(kind as ListKind);
    // Resources and templates share one notice: send each notice once.
    const notices = new Set(kinds.map((kind) => CHANGED_NOTICE[kind as ListKind]));
    for (const notice of notices) this.#tellClient(notice);
  }

  /** The person set or connected a member's credential: try it again now, tell the client. */
  credentialChanged(member: string): void {
    const link = this.options.members.links.get(member);
    if (!link || this.options.closed()) return;
    for (const elicitationId of this.#elicitations.get(member) ?? []) {
      this.options.emit(
        {
          jsonrpc: "2.0",
          method: "notifications/elicitation/complete",
          params: { elicitationId },
        } as JSONRPCMessage,
      );
    }
    this.#elicitations.delete(member);
    if (link.state === "down" && link.credentialError) {
      link.retryNow();
      for (const kind of Object.keys(LISTS) as ListKind[]) this.options.discovery.forget(kind);
      for (const notice of new Set(Object.values(CHANGED_NOTICE))) this.#tellClient(notice);
    }
  }

  /** URL elicitations the client was given, announced complete when the credential arrives. */
  rememberElicitations(member: string, data: unknown): void {
    const given = (data as { elicitations?: { elicitationId: string }[] })?.elicitations ?? [];
    const ids = [...(this.#elicitations.get(member) ?? []), ...given.map((e) => e.elicitationId)];
    this.#elicitations.set(member, ids.slice(-10));
  }

  #tellClient(method: string): void {
    if (this.#initialized && !this.options.closed()) {
      this.options.emit({ jsonrpc: "2.0", method } as JSONRPCMessage);
    }
  }
}
