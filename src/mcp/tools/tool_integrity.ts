/**
 * Tool integrity: a server may not change what a tool says behind the operators' backs. Every
 * tools/list answer that passes a session (either revision, every lane, each page, each refetch
 * after `list_changed`) is held against the definitions approved in the shared ledger
 * (tool_ledger.ts); what changed or is new follows its server's `toolChanges` (an aggregate's
 * tool: its member's): `allow` passes and records it, `hold` leaves the tool out of the list and
 * refuses its calls, `refuse` refuses every call of that server, until `gatehouse tools approve`.
 * A held tool is never replaced by its old definition: the server may no longer do what that
 * one says. This file is the gateway's side (one per configuration, with a short-lived copy of
 * what it last read per server); `SessionTools` is one session's side.
 */
import type { BackendServerConfig, ServerConfig } from "../../config/types.ts";
import type { Clock } from "../../core/clock.ts";
import type { ServerName } from "../../core/ids.ts";
import type { Logger } from "../../observability/logger.ts";
import type { RecordedChange, ToolLedger, ToolRecord, ToolRules } from "./tool_ledger.ts";
import { changedFields, definitionOf, digestOf } from "./tool_definitions.ts";
import { ApprovalWatch, type ToolState } from "./tool_approvals.ts";
import { isObject, type Json } from "../translate/json_shape.ts";

/** How long a replica trusts what it last read of a server's tools before reading again. */
export const FRESH_MS = 2_000;
/**
 * Longer tool names are judged without a record (MCP asks for at most 128 characters): a record
 * holds the name, and one too large for the storage would make every list of the server fail.
 */
export const MAX_RECORDED_NAME = 1_000;
/** Tool records kept per server unless configured (`limits.toolsPerServer`). */
export const DEFAULT_TOOLS_PER_SERVER = 2_000;

/** A change recorded, for the audit line and the metric. */
export interface ToolChangeReport extends RecordedChange {
  /** The server whose tool it is (an aggregate's member: the member). */
  server: string;
  tool: string;
  /** The aggregate it was seen through, if any, and the name it has there. */
  via?: { server: string; name: string };
}

export interface ToolIntegrityOptions {
  ledger: ToolLedger;
  clock: Clock;
  servers: ReadonlyMap<ServerName, ServerConfig>;
  logger: Logger;
  onChange(report: ToolChangeReport): void;
  /**
   * Records kept per server (`limits.toolsPerServer`): a server listing ever new names would
   * otherwise fill the shared storage, one record and one audit line per name.
   */
  toolsPerServer?: number;
}

/** The verdict on one listed tool. */
export interface ToolReview {
  owner: ToolOwner;
  digest: string;
  approved: boolean;
  /** False for a tool past `toolsPerServer`: judged, never recorded, no approval to wait for. */
  recorded: boolean;
}

/** Whose tool a name is: the server that defines it, under its own name there. */
export interface ToolOwner {
  server: BackendServerConfig;
  tool: string;
  /**
   * Called in an aggregate by the member's own name, without its prefix (as an App calls its
   * server's tools): the aggregate routes it to the member that lists it (aggregate/routing.ts).
   */
  ownName?: boolean;
}

/** What this replica last read of one tool's record. */
export interface KnownTool extends ToolState {
  /** The fields a held definition changed (names only: what a client may be told). */
  fields?: string[];
}

interface ServerTools {
  readAt: number;
  tools: Map<string, KnownTool>;
  /** Whether a list of the server was seen before (tool_ledger.ts `claimFirstSight`). */
  seen: boolean;
  /** The ledger's epoch of the server when these were read. */
  epoch: string | null;
}

/**
 * One tools/list answer under review: whether it is the first list of each server ever seen
 * (then its tools are approved on first use), asked once per server and answer.
 */
export type ListReview = Map<string, Promise<boolean>>;

export class ToolIntegrity {
  readonly #servers = new Map<string, ServerTools>();
  readonly #loading = new Map<string, Promise<ServerTools>>();
  /**
   * Digests of list entries by the entry itself: an aggregate answers its lists from one cached
   * array, so the same entries come back list after list and are digested once.
   */
  readonly #digests = new WeakMap<Json, { tool: string; digest: string }>();
  /** Per server, records being written for tools it had none of (counted against the cap). */
  readonly #creating = new Map<string, number>();
  /** Servers (and why) whose unrecorded tools were reported: once per process. */
  readonly #unrecordedReported = new Set<string>();

  /** Sessions whose lists left out held tools, told when those are approved. */
  readonly approvals: ApprovalWatch;

  constructor(readonly options: ToolIntegrityOptions) {
    this.approvals = new ApprovalWatch({
      clock: options.clock,
      logger: options.logger,
      pollMs: FRESH_MS,
      read: (server) => this.reload(server),
    });
  }

  /** The owner of the tool `name` as a client of `server` sees it; undefined: not attributable. */
  ownerOf(server: ServerConfig, name: string): ToolOwner | undefined {
    if (server.transport !== "aggregate") return { server, tool: name };
    let best: ToolOwner | undefined;
    let longest = -1;
    for (const member of server.members) {
      const prefix = `${member}${server.delimiter}`;
      const config = this.options.servers.get(member);
      if (!config || config.transport === "aggregate") continue;
      if (name.startsWith(prefix) && prefix.length > longest) {
        longest = prefix.length;
        best = { server: config, tool: name.slice(prefix.length) };
      }
    }
    return best;
  }

  /**
   * Every tool a call of `name` on `server` may reach: its owner, or, for a name no member's
   * prefix fits in an aggregate, each member's tool of that very name.
   */
  ownersOf(server: ServerConfig, name: string): ToolOwner[] {
    const owner = this.ownerOf(server, name);
    if (owner || server.transport !== "aggregate") return owner ? [owner] : [];
    return server.members.map((member) => this.options.servers.get(member))
      .filter((config) => config !== undefined && config.transport !== "aggregate")
      .map((config) => ({ server: config as BackendServerConfig, tool: name, ownName: true }));
  }

  /** What this replica knows of `server`'s tools, read again when older than FRESH_MS. */
  knownNow(server: string): ServerTools | Promise<ServerTools> {
    const cached = this.#servers.get(server);
    if (cached && this.options.clock.now() - cached.readAt < FRESH_MS) return cached;
    return this.#load(server);
  }

  /** What the ledger says of `server`'s tools now (before refusing a call on old news). */
  reload(server: string): Promise<ServerTools> {
    return this.#load(server);
  }

  #load(server: string): Promise<ServerTools> {
    const loading = this.#loading.get(server);
    if (loading) return loading;
    const load = this.#read(server).finally(() => this.#loading.delete(server));
    this.#loading.set(server, load);
    return load;
  }

  /** The records again, unless the epoch says nothing was written since they were read. */
  async #read(server: string): Promise<ServerTools> {
    const readAt = this.options.clock.now();
    const { ledger } = this.options;
    // Read before the records: a write after this moves it, and the next read sees that.
    const epoch = await ledger.epoch(server);
    const cached = this.#servers.get(server);
    if (cached && epoch !== null && cached.epoch === epoch) {
      cached.readAt = readAt;
      return cached;
    }
    const [records, seen] = await Promise.all([ledger.records(server), ledger.seen(server)]);
    const tools = new Map(records.map((r) => [r.tool, knownOf(r)]));
    const state = { readAt, tools, seen: seen || records.length > 0, epoch };
    this.#servers.set(server, state);
    return state;
  }

  /** Reads one tool's record again (before refusing a call on what may be old news). */
  async reread(server: string, tool: string): Promise<KnownTool | undefined> {
    const record = await this.options.ledger.record(server, tool);
    const known = record && knownOf(record);
    const state = this.#servers.get(server);
    if (state) {
      if (known) state.tools.set(tool, known);
      else state.tools.delete(tool);
    }
    return known;
  }

  /**
   * Holds `tool` (a tools/list entry named `name` on `server`'s client side) against the ledger:
   * returns its owner and digest, and whether it may be served.
   */
  async review(
    server: ServerConfig,
    name: string,
    tool: Json,
    list: ListReview,
  ): Promise<ToolReview | undefined> {
    const owner = this.ownerOf(server, name);
    if (!owner) return undefined;
    const definition = definitionOf(
      tool,
      owner.tool,
      owner.server === server ? undefined : owner.server.name,
    );
    const digest = this.#digestOf(tool, owner.tool, definition);
    try {
      return await this.#review(server, name, owner, definition, digest, list);
    } catch (error) {
      // Nothing is held under `allow`: a storage failure costs the record, not the tool.
      if (owner.server.toolChanges !== "allow") throw error;
      this.options.logger.warn("could not record a tool definition", {
        server: owner.server.name,
        error,
      });
      return { owner, digest, approved: true, recorded: false };
    }
  }

  async #review(
    server: ServerConfig,
    name: string,
    owner: ToolOwner,
    definition: Json,
    digest: string,
    list: ListReview,
  ): Promise<ToolReview> {
    const serverName = owner.server.name;
    const state = await this.knownNow(serverName);
    const known = state.tools.get(owner.tool);
    if (known?.approved === digest && !known.held) {
      return { owner, digest, approved: true, recorded: true };
    }
    const creating = this.#creating.get(serverName) ?? 0;
    const cap = this.toolsPerServer;
    const unrecordable = owner.tool.length > MAX_RECORDED_NAME
      ? "name"
      : !known && state.tools.size + creating >= cap
      ? "count"
      : undefined;
    if (unrecordable) {
      // Judged without a record: served under allow, left out otherwise (its calls refused).
      this.#reportUnrecorded(serverName, unrecordable, cap);
      return { owner, digest, approved: owner.server.toolChanges === "allow", recorded: false };
    }
    if (!known) this.#creating.set(serverName, creating + 1);
    let observed;
    try {
      observed = await this.options.ledger.observe(
        serverName,
        owner.tool,
        definition,
        digest,
        { ...rulesOf(owner.server), firstSight: await this.#firstSight(owner, state, list) },
      );
      state.tools.set(owner.tool, knownOf(observed.record));
    } finally {
      if (!known) {
        const left = (this.#creating.get(serverName) ?? 1) - 1;
        if (left > 0) this.#creating.set(serverName, left);
        else this.#creating.delete(serverName);
      }
    }
    if (observed.recorded) {
      this.options.onChange({
        ...observed.recorded,
        server: owner.server.name,
        tool: owner.tool,
        ...(server.transport === "aggregate" && { via: { server: server.name, name } }),
      });
    }
    return { owner, digest, approved: observed.approved, recorded: true };
  }

  /** Tool records kept per server (`limits.toolsPerServer`). */
  get toolsPerServer(): number {
    return this.options.toolsPerServer ?? DEFAULT_TOOLS_PER_SERVER;
  }

  /** A list of `server` had more entries than it may have records: the rest went unjudged. */
  pastCap(server: string): void {
    this.#reportUnrecorded(server, "count", this.toolsPerServer);
  }

  #reportUnrecorded(server: string, why: "name" | "count", cap: number): void {
    const key = `${why} ${server}`;
    if (this.#unrecordedReported.has(key)) return;
    this.#unrecordedReported.add(key);
    if (why === "name") {
      this.options.logger.warn(
        "a server lists a tool whose name is too long for tool integrity to record: it is left out of lists unless its toolChanges is allow",
        { server, limit: MAX_RECORDED_NAME },
      );
      return;
    }
    this.options.logger.warn(
      "a server lists more tools than tool integrity records: the rest are not recorded, and left out of lists unless its toolChanges is allow",
      { server, limit: cap, hint: "raise limits.toolsPerServer if the server really has so many" },
    );
  }

  #digestOf(entry: Json, tool: string, definition: Json): string {
    const known = this.#digests.get(entry);
    if (known?.tool === tool) return known.digest;
    const digest = digestOf(definition);
    this.#digests.set(entry, { tool, digest });
    return digest;
  }

  /** Whether `list` is the first list of `owner`'s server anyone saw (claimed once per list). */
  #firstSight(owner: ToolOwner, state: ServerTools, list: ListReview): Promise<boolean> {
    if (state.seen && !list.has(owner.server.name)) return Promise.resolve(false);
    let claim = list.get(owner.server.name);
    if (!claim) {
      claim = this.options.ledger.claimFirstSight(owner.server.name);
      list.set(owner.server.name, claim);
      state.seen = true;
    }
    return claim;
  }
}

export function rulesOf(server: BackendServerConfig): ToolRules {
  return { mode: server.toolChanges, ...(server.toolPins && { pins: server.toolPins }) };
}

function knownOf(record: ToolRecord): KnownTool {
  return {
    ...(record.approved && { approved: record.approved.digest }),
    ...(record.held && {
      held: record.held.digest,
      fields: changedFields(record.approved?.definition, record.held.definition),
    }),
  };
}

/** The tools of a tools/list result, when it has them. */
export function listedTools(result: unknown): unknown[] | undefined {
  return isObject(result) && Array.isArray(result.tools) ? result.tools : undefined;
}
