/**
 * The arguments of a held call as the approval page shows them and the record keeps them: the
 * same JSON shape, with long strings cut and long lists and objects shortened, each cut saying
 * how much it left out, so an approver reads what matters and the record fits the storage
 * (Deno KV takes 64 KiB a value). What is approved is the digest of the full arguments; this
 * is only what a person reads. Nothing here is ever executed or parsed as markup: the page
 * escapes it.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "../translate/json_shape.ts";

const MAX_STRING = 2_000;
const MAX_ITEMS = 50;
const MAX_DEPTH = 8;
/**
 * The whole view stays under this many bytes of JSON as UTF-8 (what the storage counts: 40,000
 * characters of "€" are 120 kB); past it, only a note says how large it was.
 */
const MAX_VIEW_BYTES = 40_000;

/** SHA-256 (hex) of the arguments' canonical JSON: what an approval is bound to. */
export function argumentsDigest(canonical: string): string {
  return createHash("sha256").update(canonical).digest("hex");
}

/** `args` canonical, as `argumentsDigest` takes them. */
export function canonicalArguments(args: unknown): string {
  return canonicalJson(args ?? {});
}

/** The arguments folded for reading. */
export function foldedArguments(args: unknown, canonicalLength: number): unknown {
  const view = fold(args ?? {}, 0);
  if (new TextEncoder().encode(JSON.stringify(view)).length <= MAX_VIEW_BYTES) return view;
  return `… ${canonicalLength} characters of arguments, too large to show: ask the caller what they hold`;
}

function fold(value: unknown, depth: number): unknown {
  if (typeof value === "string") {
    return value.length <= MAX_STRING
      ? value
      : `${value.slice(0, MAX_STRING)}… (${value.length - MAX_STRING} more characters)`;
  }
  if (value === null || typeof value !== "object") return value;
  if (depth >= MAX_DEPTH) return "… (nested deeper than shown)";
  if (Array.isArray(value)) {
    const shown = value.slice(0, MAX_ITEMS).map((item) => fold(item, depth + 1));
    if (value.length > MAX_ITEMS) shown.push(`… (${value.length - MAX_ITEMS} more items)`);
    return shown;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  const out: Record<string, unknown> = {};
  for (const [key, item] of entries.slice(0, MAX_ITEMS)) {
    let shown = key.length > 200 ? `${key.slice(0, 200)}…` : key;
    // Long keys cut to the same text stay apart: a value hidden behind another is not approved.
    for (let n = 2; Object.hasOwn(out, shown); n++) shown = `${key.slice(0, 200)}… (${n})`;
    out[shown] = fold(item, depth + 1);
  }
  if (entries.length > MAX_ITEMS) out["…"] = `${entries.length - MAX_ITEMS} more keys`;
  return out;
}
