/**
 * The aggregate's view of its members' lists for one session: asks each member (through the
 * shared cache), leaves out those that fail or are slow, merges what came back, and answers
 * "who owns this name or URI" from the merged routes.
 */
import type { Logger } from "../../observability/logger.ts";
import { DiscoveryCache } from "./cache.ts";
import {
  type Item,
  type ListKind,
  LISTS,
  type Merged,
  mergeNamed,
  mergeResources,
  type Route,
  templateOwner,
} from "./catalog.ts";
import type { MemberLink } from "./member.ts";
import { qualifiedName } from "./names.ts";
import { memberUiUri, toolUiUris, uiUriKey } from "../protocol/mcp_apps.ts";
import type { Deadline, Deadlines } from "../../core/deadlines.ts";

const MAX_MEMBER_PAGES = 100;

export function withTimeout<T>(
  deadlines: Deadlines,
  promise: Promise<T>,
  ms: number,
  what: string,
): Promise<T> {
  let deadline: Deadline | undefined;
  const timeout = new Promise<never>((_, reject) => {
    deadline = deadlines.add(
      ms,
      () => reject(new Error(`${what} took longer than ${ms / 1000}s`)),
    );
  });
  return Promise.race([promise, timeout]).finally(() => deadlines.cancel(deadline));
}

/** What one caller may use of a member's tool list. */
interface Visible {
  visible: Item[];
  /** Tools left out, by their listed names. */
  withheld: Set<string>;
  /** UI URIs only left-out tools name, as the member knows them (by uiUriKey). */
  withheldUis: Set<string>;
}

export interface DiscoveryOptions {
  cache: DiscoveryCache;
  scopeOf(member: string): string;
  delimiter: string;
  discoveryTimeoutMs: number;
  /** The gateway's one deadline timer, on its clock. */
  deadlines: Deadlines;
  logger: Logger;
  /** Connects a member if it can be; throws when it cannot. */
  ensure(link: MemberLink): Promise<void>;
  /**
   * The member's tools this session's caller may use (the member's own `tools:` policy, by its
   * own names, and the aggregate's, by the full `member<delimiter>tool` name even where the
   * listed name is cut short); all of them when absent. The cache holds every tool, as it
   * serves everyone.
   */
  memberTools?(member: string, tools: Item[]): Item[];
}

export class Discovery {
  readonly #merged = new Map<ListKind, Merged>();
  /** The member lists the last merge was made from: the same lists give the same merge. */
  readonly #mergedFrom = new Map<ListKind, [string, Item[]][]>();
  /** Members missing from the last merge, and why: their calls are told so. */
  readonly leftOut = new Map<string, string>();
  /** A cached tool list → what this session's caller may use of it (the same array each time). */
  readonly #visible = new WeakMap<Item[], Visible>();
  /** Each member's tools `memberTools` left out of its last list, by their listed names. */
  readonly #withheld = new Map<string, Set<string>>();
  /**
   * Each member's UI resources (MCP Apps, by the member's own URIs) that only tools this
   * session's caller may not use name: not listed, not read.
   */
  readonly #withheldUis = new Map<string, Set<string>>();

  constructor(
    private readonly links: ReadonlyMap<string, MemberLink>,
    private readonly options: DiscoveryOptions,
  ) {}

  /** Forgets the merged list, so the next use asks the cache (and members) again. */
  forget(kind: ListKind): void {
    this.#merged.delete(kind);
  }

  async list(kind: ListKind): Promise<Merged> {
    if (kind === "tools" || kind === "prompts" || !this.options.memberTools) {
      return await this.#list(kind);
    }
    // Which UIs are withheld follows from the tools this session's caller may use.
    await this.#list("tools");
    return this.#withoutWithheldUis(await this.#list(kind));
  }

  async #list(kind: ListKind): Promise<Merged> {
    const { cache, discoveryTimeoutMs, deadlines, logger, delimiter } = this.options;
    const spec = LISTS[kind];
    const lists = await Promise.all([...this.links.values()].map(async (link) => {
      try {
        await this.options.ensure(link);
        if (!link.info?.capabilities[spec.capability]) return undefined;
        const key = DiscoveryCache.key(
          link.name,
          kind,
          this.options.scopeOf(link.name),
        );
        // The member's own request timeout says more; this only guards the whole listing.
        const items = await withTimeout(
          deadlines,
          cache.get(key, () => this.#fetchAll(link, kind)),
          discoveryTimeoutMs + deadlines.resolutionMs,
          `listing ${link.name}`,
        );
        this.leftOut.delete(link.name);
        return [link.name, kind === "tools" ? this.#visibleTools(link.name, items) : items] as [
          string,
          Item[],
        ];
      } catch (error) {
        this.leftOut.set(link.name, (error as Error).message);
        logger.warn("aggregate member left out of a list", {
          member: link.name,
          list: kind,
          reason: (error as Error).message,
        });
        return undefined;
      }
    }));
    const present = lists.filter((entry): entry is [string, Item[]] => entry !== undefined);
    // Lists served from the cache are the very arrays merged last time: no need to merge again.
    const last = this.#mergedFrom.get(kind);
    const previous = this.#merged.get(kind);
    if (
      previous && last?.length === present.length &&
      present.every(([name, items], i) => last[i][0] === name && last[i][1] === items)
    ) return previous;
    this.#mergedFrom.set(kind, present);
    const merged = kind === "tools" || kind === "prompts"
      ? mergeNamed(present, delimiter)
      : mergeResources(present, kind === "resources" ? "uri" : "uriTemplate");
    if (merged.clashes.length) {
      logger.warn("aggregate name clash: the earlier member wins", {
        list: kind,
        names: merged.clashes.slice(0, 20),
      });
    }
    this.#merged.set(kind, merged);
    return merged;
  }

  /** Whether `name` is a tool a member has that this session's caller may not use. */
  withheld(name: string): boolean {
    for (const names of this.#withheld.values()) if (names.has(name)) return true;
    return false;
  }

  #visibleTools(member: string, items: Item[]): Item[] {
    const filter = this.options.memberTools;
    if (!filter) return items;
    let seen = this.#visible.get(items);
    if (!seen) {
      const visible = filter(member, items);
      const kept = new Set(visible);
      const hidden = items.filter((item) => !kept.has(item));
      const withheld = new Set(
        hidden.filter((item) => typeof item.name === "string")
          .map((item) => qualifiedName(member, item.name as string, this.options.delimiter)),
      );
      // A UI that a tool the caller may use also names stays: that tool shows it.
      // Compared by uiUriKey: any spelling the member would read as the same UI is that UI.
      const keysOf = (tools: Item[]) => tools.flatMap(toolUiUris).map((uri) => uiUriKey(uri)!);
      const shown = new Set(keysOf(visible));
      const withheldUis = new Set(keysOf(hidden).filter((key) => !shown.has(key)));
      this.#visible.set(items, seen = { visible, withheld, withheldUis });
    }
    this.#withheld.set(member, seen.withheld);
    this.#withheldUis.set(member, seen.withheldUis);
    return seen.visible;
  }

  /** `merged` without the UI resources whose tools this session's caller may not use. */
  #withoutWithheldUis(merged: Merged): Merged {
    const withheld = (route: Route) =>
      this.#withheldUis.get(route.member)?.has(uiUriKey(route.name) ?? route.name);
    if (![...merged.routes.values()].some(withheld)) return merged;
    const routes = new Map([...merged.routes].filter(([, route]) => !withheld(route)));
    const items = merged.items.filter((item) => {
      const key = typeof item.uri === "string" ? item.uri : item.uriTemplate;
      return typeof key !== "string" || routes.has(key);
    });
    return { items, routes, clashes: merged.clashes };
  }

  async #fetchAll(link: MemberLink, kind: ListKind): Promise<Item[]> {
    const spec = LISTS[kind];
    const items: Item[] = [];
    let cursor: unknown;
    for (let page = 0; page < MAX_MEMBER_PAGES; page++) {
      const result = await link.request(
        spec.method,
        cursor === undefined ? {} : { cursor },
        this.options.discoveryTimeoutMs,
      );
      const list = result[spec.field];
      if (Array.isArray(list)) items.push(...list as Item[]);
      cursor = result.nextCursor;
      if (typeof cursor !== "string" || cursor === "") break;
    }
    return items;
  }

  async route(kind: ListKind, key: string): Promise<Route | undefined> {
    return this.#merged.get(kind)?.routes.get(key) ??
      (await this.list(kind)).routes.get(key);
  }

  /**
   * The member that serves `uri`, and the URI as that member knows it: a `ui://<member>/…` URI
   * (MCP Apps) by its name, listed or not, unless only tools the caller may not use show it
   * ("withheld"); any other by the merged list, else by the best matching template (which
   * does not take a UI withheld from the caller by its member's own URI either).
   */
  async ownerOfUri(
    uri: unknown,
  ): Promise<{ link: MemberLink; uri: string } | "withheld" | undefined> {
    if (typeof uri !== "string") return undefined;
    const ui = memberUiUri(uri, this.links);
    if (ui) {
      if (this.options.memberTools) await this.#list("tools");
      if (this.#withheldUis.get(ui.member)?.has(uiUriKey(ui.uri)!)) return "withheld";
      return { link: this.links.get(ui.member)!, uri: ui.uri };
    }
    const listed = await this.route("resources", uri);
    if (listed) return { link: this.links.get(listed.member)!, uri: listed.name };
    const templates = this.#merged.get("resourceTemplates") ??
      await this.list("resourceTemplates");
    const owner = templateOwner(uri, templates.routes);
    if (!owner) return undefined;
    // A template that matches anything (`{+path}`) would take a withheld UI's own URI there.
    if (this.#withheldUis.get(owner)?.has(uiUriKey(uri) ?? "")) return "withheld";
    return { link: this.links.get(owner)!, uri };
  }

  /**
   * The tools listed under `name` as their member knows it (an App calls its tools by the
   * names its own server gave them): none, one (the call can go there), or several (it cannot).
   */
  async toolsNamed(name: string): Promise<{ listed: string; route: Route }[]> {
    const merged = this.#merged.get("tools") ?? await this.list("tools");
    return [...merged.routes].filter(([, route]) => route.name === name)
      .map(([listed, route]) => ({ listed, route }));
  }
}
