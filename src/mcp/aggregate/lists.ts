/**
 * The aggregate's merged lists as its client sees them: one page of a merged list per
 * request, and which list_changed notice stands for which list, both ways.
 */
import { RpcErrorCode } from "../protocol/jsonrpc.ts";
import { type ListKind, LISTS, page } from "./catalog.ts";
import type { Discovery } from "./discovery.ts";
import { MemberError } from "./member.ts";

/** Large, because some clients read only the first page; long lists still page. */
export const PAGE_SIZE = 2_000;

/** A member's list_changed notice → the lists it makes stale. */
export const LIST_CHANGED: Record<string, ListKind[]> = {
  "notifications/tools/list_changed": ["tools"],
  "notifications/prompts/list_changed": ["prompts"],
  "notifications/resources/list_changed": ["resources", "resourceTemplates"],
};

/** A list → the notice that tells the client it changed (resources and templates share one). */
export const CHANGED_NOTICE: Record<ListKind, string> = {
  tools: "notifications/tools/list_changed",
  prompts: "notifications/prompts/list_changed",
  resources: "notifications/resources/list_changed",
  resourceTemplates: "notifications/resources/list_changed",
};

/** The page of the merged `kind` list that `cursor` points at, as the list result. */
export async function listPage(
  discovery: Discovery,
  kind: ListKind,
  cursor: unknown,
): Promise<Record<string, unknown>> {
  const merged = await discovery.list(kind);
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
