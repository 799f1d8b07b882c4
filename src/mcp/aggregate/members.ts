/**
 * An aggregate's members as one whole, for one session: each member's link, connected with
 * the client's own initialize; a member that failed kept out until its back-off has passed on
 * the clock, and the error its calls get meanwhile; and the answer to the client's initialize
 * (the members' capabilities united, their instructions joined).
 */
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
   * The kinds of capability the client declared at initialize (`sampling`, `roots`, each
   * extension by its id …), in one word: members answer lists by them, so the shared cache
   * keeps one list per such word.
   */
  capabilityKinds(): string {
    const capabilities = this.#init?.capabilities ?? {};
    const kinds = Object.keys(capabilities).filter((kind) => kind !== "extensions");
    const extensions = capabilities.extensions;
    if (extensions && typeof extensions === "object") {
      kinds.push(...Object.keys(extensions).map((id) => `extensions:${id}`));
    }
    return kinds.sort().join(",");
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
