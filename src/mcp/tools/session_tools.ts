/**
 * One session's side of tool integrity (tool_integrity.ts): its tools/list answers are held
 * against the approved definitions before the client sees them, and each tools/call is checked
 * against what this session was shown and what the ledger knows: a change any session or replica
 * saw holds the tool here too, and a tool this session was shown in a definition not approved
 * (held when it listed) stays refused until that definition is approved. A session whose client
 * calls before listing (its list cached from elsewhere) lists the tools itself first.
 */
import type { ServerConfig } from "../../config/types.ts";
import type { JSONRPCMessage } from "../../sdk.ts";
import {
  errorResponse,
  type RequestId,
  RpcErrorCode,
  type RpcResponse,
} from "../protocol/jsonrpc.ts";
import { ModernErrorCode } from "../protocol/protocol_versions.ts";
import {
  type KnownTool,
  listedTools,
  type ListReview,
  type ToolIntegrity,
  type ToolOwner,
} from "./tool_integrity.ts";
import { isObject, type Json } from "../translate/json_shape.ts";
import { judgedEntry } from "./tool_definitions.ts";
import type { ApprovalWaiter, HeldTool } from "./tool_approvals.ts";
import type { OwnRequests } from "./own_requests.ts";

/** Names a session was shown, with the digest each was shown with; bounded like the list. */
const MAX_REMEMBERED = 10_000;
/** Pages the gateway reads when it lists a server's tools itself. */
const MAX_OWN_PAGES = 20;
/**
 * The pages that follow a server's first list (by its `nextCursor`) belong to that first sight
 * too, up to this many and within this long of the first page: a paginated server's second
 * page was once held as new tools, all of them.
 */
const FIRST_SIGHT_PAGES = 100;
const FIRST_SIGHT_PAGING_MS = 60_000;

type Maybe<T> = T | Promise<T>;

export class SessionTools implements ApprovalWaiter {
  /** Client-side name → the digest the session was shown it with. */
  readonly #shown = new Map<string, string>();
  /** Client-side name → the tool left out of this session's lists, until approved. */
  readonly held = new Map<string, HeldTool>();

  /** The session ended: a review still under way must not make it wait for approvals. */
  #closed = false;
  /** Whether this session reviewed a list since it started or the server's last list_changed. */
  #listed = false;
  /** The gateway's own listing under way, for calls that came before any list. */
  #listing?: Promise<void>;
  /** The review a paginated list's next page continues (first sight reaches its pages). */
  #paging?: { list: ListReview; pages: number; since: number };

  constructor(
    private readonly integrity: ToolIntegrity,
    private readonly server: ServerConfig,
    private readonly session: SessionSide = {},
  ) {}

  /** A held tool was approved: the client is told to list again, and now sees it. */
  approved(): void {
    this.session.tell?.({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
  }

  /** Takes the backend's answer to the gateway's own listing. */
  ownAnswer(response: RpcResponse): boolean {
    return this.session.ask?.answered(response) ?? false;
  }

  /** The session ended: nothing more to tell its client. */
  close(): void {
    this.#closed = true;
    this.integrity.approvals.forget(this);
    this.session.ask?.endAll("the session ended");
  }

  /** The server announced a new list: what this session was shown no longer says what it has. */
  listChanged(): void {
    this.#shown.clear();
    this.#listed = false;
  }

  /**
   * `response` to tools/list without the tools held, and with a cache lifetime of 0 when any
   * is (a 2026 client would otherwise keep the list without them until its `ttlMs` ran out).
   * If the ledger cannot be read, the client gets an error rather than unchecked tools.
   */
  async reviewList(response: RpcResponse): Promise<RpcResponse> {
    const tools = listedTools(response.result);
    if (!tools) return response;
    this.#listed = true;
    const list = this.#pageReview(response);
    try {
      const judged = this.server.transport === "aggregate" ||
        this.server.toolChanges !== "allow";
      // Past the records a server may have, entries cost nothing: a list of 80,000 names once
      // took a second of the gateway per listing, after the cap had stopped the storage.
      // (An aggregate's pages are smaller, and each member has its own cap.)
      const reviewed = this.server.transport === "aggregate"
        ? tools.length
        : Math.min(tools.length, this.integrity.toolsPerServer);
      if (reviewed < tools.length) this.integrity.pastCap(this.server.name);
      // A name listed more than once is judged once, by all its entries together.
      const alike = sameNamed(tools.slice(0, reviewed));
      const reviews = new Map<string, ReturnType<ToolIntegrity["review"]>>();
      const reviewOf = (name: string) => {
        let review = reviews.get(name);
        if (!review) {
          const entry = judgedEntry(name, alike.get(name)!);
          reviews.set(name, review = this.integrity.review(this.server, name, entry, list));
        }
        return review;
      };
      const verdicts = await Promise.all(tools.map(async (tool, index) => {
        if (index >= reviewed) return !judged;
        // Not a tool any client may take (MCP: an object with a string name); not served
        // unreviewed where changes are held.
        if (!isObject(tool) || typeof tool.name !== "string") return !judged;
        const review = await reviewOf(tool.name);
        if (!review) return true;
        if (this.#shown.size < MAX_REMEMBERED) this.#shown.set(tool.name, review.digest);
        if (review.approved || !review.recorded) this.held.delete(tool.name);
        else if (this.held.size < MAX_REMEMBERED) {
          const { owner, digest } = review;
          this.held.set(tool.name, { server: owner.server.name, tool: owner.tool, digest });
        }
        return review.approved;
      }));
      // A session that ended while its list was reviewed would wait, and be polled for, for ever.
      if (!this.#closed) this.integrity.approvals.wait(this);
      if (verdicts.every(Boolean)) return response;
      const result = { ...response.result!, tools: tools.filter((_, i) => verdicts[i]) };
      if ("ttlMs" in result) result.ttlMs = 0;
      return { ...response, result };
    } catch (error) {
      this.integrity.options.logger.error("could not check tool definitions", { error });
      return errorResponse(
        response.id,
        RpcErrorCode.internalError,
        "the gateway could not check this server's tool definitions against the approved ones (its storage failed); try again",
      ) as RpcResponse;
    }
  }

  /**
   * The review of one list answer: a new one, or the one its previous page began when this
   * answer continues a paginated first list (pages come one at a time, in order, from one
   * session's client or the gateway's own listing).
   */
  #pageReview(response: RpcResponse): ListReview {
    const now = this.integrity.options.clock.now();
    const paging = this.#paging;
    const continues = paging && paging.pages < FIRST_SIGHT_PAGES &&
      now - paging.since < FIRST_SIGHT_PAGING_MS;
    const list: ListReview = continues ? paging.list : new Map();
    const more = isObject(response.result) && typeof response.result.nextCursor === "string";
    this.#paging = more
      ? { list, pages: continues ? paging.pages + 1 : 1, since: continues ? paging.since : now }
      : undefined;
    return list;
  }

  /** The refusal of a tools/call of `name`, or undefined when it may go to the server. */
  callRefusal(id: RequestId, name: unknown): Maybe<JSONRPCMessage | undefined> {
    if (typeof name !== "string") {
      // A name that is no string is judged by no record, and a server may still read it as
      // one (`tools[["search"]]` is `tools.search` in JavaScript).
      return errorResponse(
        id,
        ModernErrorCode.invalidParams,
        "tools/call needs params.name, the name of a tool as a string",
      ) as JSONRPCMessage;
    }
    const owners = this.integrity.ownersOf(this.server, name)
      .filter((owner) => owner.server.toolChanges !== "allow");
    if (owners.length === 0) return undefined;
    if (!this.#listed && this.session.ask) {
      // A client that never listed here (its list cached from elsewhere): the gateway lists
      // first, so the call is judged on what the server says now, not on a list seen elsewhere.
      return (this.#listing ??= this.#listOwn().finally(() => this.#listing = undefined))
        .then(() => this.#judgeOwners(id, name, owners));
    }
    return this.#judgeOwners(id, name, owners);
  }

  #judgeOwners(
    id: RequestId,
    name: string,
    owners: ToolOwner[],
  ): Maybe<JSONRPCMessage | undefined> {
    if (!owners[0].ownName) return this.#judgeNow(id, name, owners[0]);
    // An aggregate's member's own name: judged by each member that knows a tool of that name
    // (the listing above recorded every tool the aggregate could route it to); a member that
    // never listed one cannot be where the call goes.
    return (async () => {
      for (const owner of owners) {
        const known = await this.integrity.knownNow(owner.server.name);
        if (!known.tools.has(owner.tool)) continue;
        const refused = await this.#judge(id, name, owner, known.tools);
        if (refused) return refused;
      }
      return undefined;
    })();
  }

  #judgeNow(id: RequestId, name: string, owner: ToolOwner): Maybe<JSONRPCMessage | undefined> {
    const known = this.integrity.knownNow(owner.server.name);
    return known instanceof Promise
      ? known.then((state) => this.#judge(id, name, owner, state.tools))
      : this.#judge(id, name, owner, known.tools);
  }

  /** Lists the server's tools as the gateway (every page, at most MAX_OWN_PAGES) and reviews them. */
  async #listOwn(): Promise<void> {
    const { ask, send } = this.session;
    if (!ask || !send) return;
    let cursor: unknown;
    try {
      for (let page = 0; page < MAX_OWN_PAGES; page++) {
        const answer = await ask.ask(send, "tools/list", cursor === undefined ? {} : { cursor });
        if (!answer.result) return;
        await this.reviewList(answer);
        cursor = answer.result.nextCursor;
        if (typeof cursor !== "string") return;
      }
    } catch (error) {
      // Judged on what the ledger knows, as before this listing was tried.
      this.integrity.options.logger.warn("could not list the tools before a call", { error });
    }
  }

  #judge(
    id: RequestId,
    name: string,
    owner: ToolOwner,
    tools: Map<string, KnownTool>,
  ): Maybe<JSONRPCMessage | undefined> {
    if (owner.server.toolChanges === "refuse" && heldOf(tools).length) {
      // As below: read again before refusing, in case an operator approved meanwhile.
      return this.integrity.reload(owner.server.name).then((state) => {
        const held = heldOf(state.tools);
        return held.length
          ? serverRefusal(id, owner, held)
          : this.#judge(id, name, owner, state.tools);
      });
    }
    const shown = this.#shown.get(name);
    if (passes(tools.get(owner.tool), shown)) return undefined;
    // Refused on what this replica read up to FRESH_MS ago: read the record again first, so a
    // call right after an approval is not refused on old news.
    return this.integrity.reread(owner.server.name, owner.tool).then((now) =>
      passes(now, shown) ? undefined : toolRefusal(id, name, owner, now)
    );
  }
}

/** The list's entries that are tools (objects with a string name), by name. */
function sameNamed(tools: readonly unknown[]): Map<string, Json[]> {
  const byName = new Map<string, Json[]>();
  for (const tool of tools) {
    if (!isObject(tool) || typeof tool.name !== "string") continue;
    const entries = byName.get(tool.name);
    if (entries) entries.push(tool);
    else byName.set(tool.name, [tool]);
  }
  return byName;
}

/** What a session gives its SessionTools: its client, and a way to ask its backend itself. */
export interface SessionSide {
  tell?(message: JSONRPCMessage): void;
  ask?: OwnRequests;
  send?(message: JSONRPCMessage): Promise<void>;
}

/**
 * A call may go on when the tool has an approved definition (a name no list ever showed has
 * none: a server that hides a tool from its lists, then has a model told to call it, gets no
 * unreviewed call through), no change of it is waiting (seen by any session or replica: an
 * HTTP backend is the same server for everyone) and, when this session was shown the tool, it
 * was shown the approved definition.
 */
function passes(known: KnownTool | undefined, shown: string | undefined): boolean {
  return known?.approved !== undefined && !known.held &&
    (shown === undefined || known.approved === shown);
}

function heldOf(tools: Map<string, KnownTool>): [string, KnownTool][] {
  return [...tools].filter(([, known]) => known.held);
}

/**
 * The answer to a call of a held tool: that it changed, which fields (by name; the new text
 * goes to the operator alone: gatehouse tools diff, the audit trail, the log), and what an
 * operator runs.
 */
function toolRefusal(
  id: RequestId,
  name: string,
  owner: ToolOwner,
  known: KnownTool | undefined,
): JSONRPCMessage {
  const server = owner.server.name;
  const tool = JSON.stringify(owner.tool.slice(0, 200));
  if (!known) return unlistedRefusal(id, name, owner);
  const what = known?.approved ? "changed its definition since it was approved" : "is new";
  const fields = known?.approved && known.fields?.length
    ? ` (changed: ${known.fields.join(", ")})`
    : "";
  return errorResponse(
    id,
    ModernErrorCode.invalidParams,
    `the tool ${
      JSON.stringify(name.slice(0, 200))
    } is held by the gateway: on the server "${server}" it ${what}${fields}; it is not served until an operator reviews it (gatehouse tools diff ${server} ${tool}) and approves it (gatehouse tools approve ${server} ${tool})`,
    {
      reason: "tool_change_held",
      server,
      tool: owner.tool,
      change: known?.approved ? "changed" : "new",
      ...(known?.approved && known.fields && { fields: known.fields }),
    },
  );
}

/** The answer to a call of a tool the gateway holds no definition of: it was never listed. */
function unlistedRefusal(id: RequestId, name: string, owner: ToolOwner): JSONRPCMessage {
  const server = owner.server.name;
  return errorResponse(
    id,
    ModernErrorCode.invalidParams,
    `the tool ${
      JSON.stringify(name.slice(0, 200))
    } is not in any list of tools the gateway has seen from the server "${server}", so it has no approved definition to serve it under; list the tools again (tools/list) and call one of them (a server listing more tools than limits.toolsPerServer has the rest left out)`,
    { reason: "tool_not_listed", server, tool: owner.tool },
  );
}

/**
 * The answer to any call of a server with `toolChanges: refuse` while a change waits. Tools
 * already approved are named as clients were shown them; a new tool's name is text nobody
 * reviewed (it may carry instructions, as a description may): counted, never quoted.
 */
function serverRefusal(
  id: RequestId,
  owner: ToolOwner,
  held: [string, KnownTool][],
): JSONRPCMessage {
  const server = owner.server.name;
  const changed = held.filter(([, known]) => known.approved).map(([tool]) => tool);
  const fresh = held.length - changed.length;
  const names = changed.slice(0, 5).map((tool) => JSON.stringify(tool.slice(0, 100))).join(", ");
  const kinds = [
    changed.length && `${changed.length} changed: ${names}${changed.length > 5 ? ", …" : ""}`,
    fresh && `${fresh} new`,
  ].filter(Boolean).join("; ");
  const count = `${held.length} tool definition${held.length === 1 ? "" : "s"}`;
  return errorResponse(
    id,
    ModernErrorCode.invalidParams,
    `the server "${server}" has ${count} waiting for review (${kinds}), and its calls are refused until an operator reviews them (gatehouse tools diff ${server}) and approves them (gatehouse tools approve ${server})`,
    { reason: "tool_change_refused", server, tools: changed.slice(0, 50), new: fresh },
  );
}
