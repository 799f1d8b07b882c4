/**
 * A tool's definition as the gateway remembers it: what a client and its model decide from
 * (name, title, description, input and output schemas, annotations, icons, execution and any
 * field a later revision adds), without `_meta`, the one place the protocol leaves to
 * implementations for data that may differ from one answer to the next, except the UI it names
 * (MCP Apps), which people are shown. Its digest is the
 * SHA-256 of its canonical JSON (keys sorted), so key order and whitespace change nothing; the
 * field-level description of a change is what an operator reads before approving it.
 */
import { createHash } from "node:crypto";
import { canonicalJson, isObject, type Json } from "../translate/json_shape.ts";
import { memberUiUri, uiMetaOf } from "../protocol/mcp_apps.ts";

/** Definitions larger than this are remembered by digest only (storage records are bounded). */
export const MAX_KEPT_DEFINITION_CHARS = 16_000;
/** At most this many lines describe one change; the rest are counted. */
const MAX_CHANGE_LINES = 12;
/** Values shown in a change are cut to this many characters. */
const MAX_SHOWN_VALUE = 80;
/**
 * A whole line of a change is cut to this many characters: its path repeats every key above
 * the field, and a server's keys may be of any length (12 lines under one 6,000-character key
 * once made a record too large to store, and every list of the server failed).
 */
export const MAX_CHANGE_LINE = 240;

/**
 * `tool` as remembered: without `_meta`, under the name its own server gives it; but with the
 * part of `_meta` that names its UI (MCP Apps: `_meta.ui` and the older keys), as its own server
 * names it (`fromAggregate` takes away an aggregate's prefix), since a server that swaps the UI
 * of an approved tool changes what people are shown and what the tool may do through it.
 */
export function definitionOf(tool: Json, name: string, fromAggregate?: string): Json {
  const definition: Json = {};
  for (const key of Object.keys(tool)) {
    if (key !== "_meta" && tool[key] !== undefined) definition[key] = tool[key];
  }
  definition.name = name;
  const ui = uiMetaOf(tool, (uri) => {
    if (fromAggregate === undefined) return uri;
    return memberUiUri(uri, new Set([fromAggregate]))?.uri ?? uri;
  });
  if (ui) definition._meta = ui as Json;
  return definition;
}

/** The hex SHA-256 of the definition's canonical JSON: what `tools.pinned` names. */
export function digestOf(definition: Json): string {
  return createHash("sha256").update(canonicalJson(definition)).digest("hex");
}

/** The definition when it is small enough to keep beside its digest; else undefined. */
export function keptDefinition(definition: Json): Json | undefined {
  return canonicalJson(definition).length <= MAX_KEPT_DEFINITION_CHARS ? definition : undefined;
}

/**
 * What changed from `before` to `after`, one line per field that differs, deepest first where
 * both sides are objects: `+inputSchema.properties.path` (added), `-annotations.readOnlyHint`
 * (removed), `description: "Searches" → "Searches. First read ~/.ssh…"`. Without `before`
 * (a new tool, or one too large to have been kept), a line saying so.
 */
export function describeChanges(before: Json | undefined, after: Json | undefined): string[] {
  if (!before) return ["new tool (no approved definition to compare with)"];
  if (!after) return ["definition changed (too large to keep; compare the digests)"];
  const lines: string[] = [];
  const entries = after[SAME_NAME_ENTRIES];
  if (Array.isArray(entries) && !(SAME_NAME_ENTRIES in before)) {
    // Several entries under one name: each against the approved definition, numbered.
    lines.push(`listed ${entries.length} times under this name, with different definitions:`);
    entries.forEach((entry, i) => {
      const own: string[] = [];
      compare(before, entry, "", own);
      lines.push(...(own.length ? own : ["(as approved)"]).map((line) => `[${i + 1}] ${line}`));
    });
  } else compare(before, after, "", lines);
  const cut = lines.map((line) =>
    line.length > MAX_CHANGE_LINE ? `${line.slice(0, MAX_CHANGE_LINE - 1)}…` : line
  );
  if (cut.length > MAX_CHANGE_LINES) {
    const more = cut.length - (MAX_CHANGE_LINES - 1);
    return [...cut.slice(0, MAX_CHANGE_LINES - 1), `… and ${more} more`];
  }
  return cut;
}

/**
 * The key under which a list's several entries of one name are judged together
 * (`judgedEntry`); a field the gateway makes, so a client may be told of it by name.
 */
export const SAME_NAME_ENTRIES = "entriesUnderThisName";

/**
 * What a list's entries named alike are judged as: the entry itself, or, when a server lists one
 * name several times with different definitions, all of them as one definition, in an order of
 * their own (so no single entry, and not the order the server chose, decides what is served or
 * what the operator reviews). Identical entries count once.
 */
export function judgedEntry(name: string, entries: readonly Json[]): Json {
  const distinct = new Map<string, Json>();
  for (const entry of entries) distinct.set(canonicalJson(definitionOf(entry, name)), entry);
  if (distinct.size === 1) return entries[0];
  const all = [...distinct.keys()].sort().map((text) => JSON.parse(text) as Json);
  return { name, [SAME_NAME_ENTRIES]: all };
}

/** The fields of a tool's definition the protocol names; no other key is ever repeated. */
const NAMED_FIELDS = new Set([
  SAME_NAME_ENTRIES,
  "name",
  "title",
  "description",
  "inputSchema",
  "outputSchema",
  "annotations",
  "icons",
  "execution",
]);

/**
 * Which top-level fields changed from `before` to `after`, for the client whose call of a held
 * tool is refused: names only, never values, and only names the protocol gives (a change under
 * another key is "other fields"), since the new text, and even a key the server chose, may be
 * the very instruction the hold keeps from the model. Empty for a new tool, or one too large to
 * have been kept.
 */
export function changedFields(before: Json | undefined, after: Json | undefined): string[] {
  if (!before || !after) return [];
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  const differing = [...keys].filter((key) =>
    canonicalJson(before[key] ?? null) !== canonicalJson(after[key] ?? null) ||
    (key in before) !== (key in after)
  );
  const named = differing.filter((key) => NAMED_FIELDS.has(key)).sort();
  return differing.length > named.length ? [...named, "other fields"] : named;
}

function compare(before: unknown, after: unknown, path: string, lines: string[]): void {
  if (isObject(before) && isObject(after)) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    for (const key of [...keys].sort()) {
      const at = path ? `${path}.${key}` : key;
      if (!(key in after)) lines.push(`-${at}`);
      else if (!(key in before)) lines.push(`+${at}: ${shown(after[key])}`);
      else compare(before[key], after[key], at, lines);
    }
    return;
  }
  if (canonicalJson(before) === canonicalJson(after)) return;
  lines.push(`${path || "(definition)"}: ${shown(before)} → ${shown(after)}`);
}

function shown(value: unknown): string {
  const text = canonicalJson(value);
  return text.length > MAX_SHOWN_VALUE ? `${text.slice(0, MAX_SHOWN_VALUE - 1)}…` : text;
}
