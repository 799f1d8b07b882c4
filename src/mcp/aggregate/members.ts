/**
 * An aggregate's members as one whole, for one session: each member's link, connected with
 * the client's own initialize; a member that failed kept out until its back-off has passed on
 * the clock, and the error its calls get meanwhile; and the answer to the client's initialize
 * (the members' capabilities united, their instructions joined).
 */
import { createHash } from "node:crypto";
import type { AggregateServerConfig, BackendServerConfig } from "../../config/types.ts";
import type { Clock } from "../../core/clock.ts";
import type { Deadlines } from "../../core/deadlines.ts";
import type { Logger } from "../../observability/logger.ts";
import { VERSION } from "../../version.ts";
import type { Backend } from "../backends/connect.ts";
import { credentialRpcError, supportsUrlElicitation } from "../protocol/credential_errors.ts";
import { RpcErrorCode } from "../protocol/jsonrpc.ts";
import {
  LATEST_SESSION_PROTOCOL_VERSION,
  negotiateProtocolVersion,
} from "../protocol/protocol_versions.ts";
import type { DiscoveryCache } from "./cache.ts";
import { LISTS, unionCapabilities } from "./catalog.ts";
import { withTimeout } from "./discovery.ts";
import { MemberError, type MemberHandlers, type MemberInit, MemberLink } from "./member.ts";

export interface MembersOptions {
  server: AggregateServerConfig;
  members: BackendServerConfig[];
  connect(member: BackendServerConfig): Backend | Promise<Backend>;
  /** Told when a member is back, so every session in its scope lists it again. */
  cache: DiscoveryCache;
  /** "*" when a member's lists are the same for everyone, else the person's (aggregate.ts). */
  scopeOf(member: BackendServerConfig): string;
  /** How long connecting may take before a member is left out. */
  discoveryTimeoutMs: number;
  /** A member that failed is tried again after this long on the clock. */
  retryAfterMs: number;
  clock: Clock;
  deadlines: Deadlines;
  logger: Logger;
  /** Where each member's notifications, requests and fall go. */
  handlers: MemberHandlers;
}

export class Members {
  /** Each member's link, in the configured order (the earlier member wins a clash). */
  readonly links: ReadonlyMap<string, MemberLink>;
  readonly #configs = new Map<string, BackendServerConfig>();
  /** The client's initialize, which every member is connected with once it has come. */
  #init?: MemberInit;

  constructor(private readonly options: MembersOptions) {
    const links = new Map<string, MemberLink>();
    for (const config of options.members) {
      this.#configs.set(config.name, config);
      links.set(
        config.name,
        new MemberLink(config.name, {
          connect: () => options.connect(config),
          clock: options.clock,
          deadlines: options.deadlines,
          logger: options.logger,
          handlers: options.handlers,
        }),
      );
    }
    this.links = links;
  }

  config(member: string): BackendServerConfig {
    return this.#configs.get(member)!;
  }

  /** The member whose namespace `name` is in, whether or not it lists that name. */
  ownerOf(name: string): MemberLink | undefined {
    return [...this.links.values()].find((link) =>
      name.startsWith(`${link.name}${this.options.server.delimiter}`)
    );
  }

  /** Connects every member it can with the client's initialize; answers with their union. */
  async initialize(params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const requested = String(params.protocolVersion ?? "");
    this.#init = {
      protocolVersion: requested || LATEST_SESSION_PROTOCOL_VERSION,
      capabilities: (params.capabilities as Record<string, unknown>) ?? {},
      clientInfo: (params.clientInfo as Record<string, unknown>) ??
        { name: "unknown", version: "0" },
    };
    await Promise.all([...this.links.values()].map((link) => this.ensure(link).catch(() => {})));
    const ready = [...this.links.values()].filter((link) => link.state === "ready");
    const instructions = ready.filter((l) => l.info?.instructions)
      .map((l) => `${l.name}: ${l.info!.instructions}`).join("\n\n");
    return {
      protocolVersion: negotiateProtocolVersion(requested),
      capabilities: unionCapabilities(ready.map((link) => link.info!.capabilities)),
      serverInfo: { name: `gatehouse/${this.options.server.name}`, version: VERSION },
      ...(instructions && { instructions }),
    };
  }

  /**
   * What the client declared at initialize, in one short word: members answer lists by it
   * (sampling, roots, an extension and its settings: the ext-apps servers show a UI only to a
   * host whose `io.modelcontextprotocol/ui` lists the MCP App MIME type), so the shared cache
   * keeps one list per such word. The settings count, not only the names: a client naming the
   * extension without the MIME type once got a host's UI list, and a host that client's list.
   */
  capabilityKey(): string {
    const declared = sortedJson(this.#init?.capabilities ?? {});
    return createHash("sha256").update(declared).digest("hex").slice(0, 32);
  }

  /** Connects a member if it is not connected and has not failed too recently. */
  async ensure(link: MemberLink): Promise<void> {
    const { clock, retryAfterMs, discoveryTimeoutMs } = this.options;
    if (link.state === "ready") return;
    if (link.state === "down" && clock.now() - link.downAt < retryAfterMs) {
      throw this.unavailable(link);
    }
    const wasDown = link.state === "down";
    const init = this.#init ?? {
      protocolVersion: LATEST_SESSION_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "gatehouse", version: VERSION },
    };
    try {
      await withTimeout(
        this.options.deadlines,
        link.connect(init, discoveryTimeoutMs),
        discoveryTimeoutMs,
        `connecting to ${link.name}`,
      );
    } catch (error) {
      throw link.credentialError ? this.unavailable(link) : error;
    }
    if (wasDown) {
      this.options.logger.info("aggregate member is back", { member: link.name });
      this.options.cache.invalidate(
        link.name,
        Object.keys(LISTS),
        this.options.scopeOf(this.config(link.name)),
      );
    }
  }

  /** Why a member cannot be used now, as the error its calls get. */
  unavailable(link: MemberLink, suffix = ""): MemberError {
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

  async close(): Promise<void> {
    await Promise.all([...this.links.values()].map((link) => link.close()));
  }
}

/** JSON with every object's keys in order: one text for one set of capabilities. */
function sortedJson(value: unknown): string {
  return JSON.stringify(
    value,
    (_key, item) =>
      item && typeof item === "object" && !Array.isArray(item)
        ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0))
        : item,
  );
}
