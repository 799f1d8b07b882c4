/**
 * The merged view of the members' lists, and the routes back: which member, under which
 * original name, owns each tool, prompt, resource and resource template. Pure: built from the
 * lists the members returned, in the configured member order.
 */
import { aggregateUiUri, mapToolUiUris } from "../protocol/mcp_apps.ts";
import { qualifiedName } from "./names.ts";

export type ListKind = "tools" | "prompts" | "resources" | "resourceTemplates";

/** Where each list lives in a member's capabilities, its method and its result field. */
export const LISTS: Record<ListKind, { capability: string; method: string; field: string }> = {
  tools: { capability: "tools", method: "tools/list", field: "tools" },
  prompts: { capability: "prompts", method: "prompts/list", field: "prompts" },
  resources: { capability: "resources", method: "resources/list", field: "resources" },
  resourceTemplates: {
    capability: "resources",
    method: "resources/templates/list",
    field: "resourceTemplates",
  },
};

export type Item = Record<string, unknown>;

export interface Route {
  member: string;
  name: string;
}

export interface Merged {
  items: Item[];
  /** Qualified name (tools, prompts) or URI (resources) → owner. */
  routes: Map<string, Route>;
  /** Clashes resolved in favour of the earlier member, for the log. */
  clashes: string[];
}

/**
 * Tools and prompts: each name becomes member + delimiter + name; a tool's UI (MCP Apps) is
 * named as the aggregate names the member's `ui://` resources; nothing else changes.
 */
export function mergeNamed(lists: [string, Item[]][], delimiter: string): Merged {
  const routes = new Map<string, Route>();
  const items: Item[] = [];
  const clashes: string[] = [];
  for (const [member, list] of lists) {
    for (const item of list) {
      if (typeof item.name !== "string") continue;
      const name = qualifiedName(member, item.name, delimiter);
      if (routes.has(name)) {
        clashes.push(name);
        continue;
      }
      routes.set(name, { member, name: item.name });
      items.push({ ...mapToolUiUris(item, (uri) => aggregateUiUri(member, uri)), name });
    }
  }
  return { items, routes, clashes };
}

/**
 * Resources keep their URIs, except a member's `ui://` ones (MCP Apps), which gain the member's
 * name so that two members' UIs never collide; any other URI listed by two members goes to the
 * first. A route's `name` is the URI as its member knows it.
 */
export function mergeResources(lists: [string, Item[]][], key: "uri" | "uriTemplate"): Merged {
  const routes = new Map<string, Route>();
  const items: Item[] = [];
  const clashes: string[] = [];
  for (const [member, list] of lists) {
    for (const item of list) {
      const own = item[key];
      if (typeof own !== "string") continue;
      const uri = aggregateUiUri(member, own);
      if (routes.has(uri)) {
        clashes.push(uri);
        continue;
      }
      routes.set(uri, { member, name: own });
      items.push(uri === own ? item : { ...item, [key]: uri });
    }
  }
  return { items, routes, clashes };
}

/** The member whose resource template could have produced `uri` (its text before "{"). */
export function templateOwner(uri: string, templates: Map<string, Route>): string | undefined {
  let best: { member: string; length: number } | undefined;
  for (const [template, route] of templates) {
    const prefix = template.split("{")[0];
    if (uri.startsWith(prefix) && (!best || prefix.length > best.length)) {
      best = { member: route.member, length: prefix.length };
    }
  }
  return best?.member;
}

/**
 * The capabilities the aggregate offers: what at least one member offers, nothing more. An
 * extension a member declares (`extensions`, such as MCP Apps' `io.modelcontextprotocol/ui`) is
 * declared with the settings of the first member that declares it.
 */
export function unionCapabilities(all: Record<string, unknown>[]): Record<string, unknown> {
  const union: Record<string, Record<string, unknown>> = {};
  for (const capabilities of all) {
    const extensions = capabilities.extensions;
    if (extensions && typeof extensions === "object" && !Array.isArray(extensions)) {
      for (const [id, settings] of Object.entries(extensions)) {
        union.extensions ??= {};
        if (!(id in union.extensions)) union.extensions[id] = settings;
      }
    }
    for (const name of ["tools", "prompts", "resources", "logging", "completions"]) {
      const value = capabilities[name];
      if (!value || typeof value !== "object") continue;
      union[name] ??= {};
      for (const [flag, on] of Object.entries(value as Record<string, unknown>)) {
        if (on === true) union[name][flag] = true;
      }
    }
  }
  return union;
}

/** Opaque cursors over a merged list. */
export function page(
  items: Item[],
  cursor: unknown,
  size: number,
): { items: Item[]; nextCursor?: string } | undefined {
  let offset = 0;
  if (cursor !== undefined) {
    if (typeof cursor !== "string" || !/^o[0-9]{1,9}$/.test(cursor)) return undefined;
    offset = Number(cursor.slice(1));
  }
  const slice = items.slice(offset, offset + size);
  const next = offset + size < items.length ? `o${offset + size}` : undefined;
  return { items: slice, ...(next && { nextCursor: next }) };
}
