/**
 * Namespacing for aggregates: `member` + delimiter + `name`. MCP 2025-11-25 asks tool names to
 * be at most 128 characters; a longer combination is cut to 119 characters and ends with "_"
 * plus 8 hex digits of a hash of the whole, so it stays unique, deterministic and recognisable.
 * Calls are routed by the table built from the lists, never by parsing the name, and tool
 * policies are applied to the full name, never to the cut one (discovery.ts).
 */
import { MAX_TOOL_NAME_LENGTH } from "../../core/tool_gate.ts";

export const MAX_NAME_LENGTH = MAX_TOOL_NAME_LENGTH;

/** FNV-1a, 32 bits: a small stable hash (not a security boundary). */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

export function qualifiedName(member: string, name: string, delimiter: string): string {
  const full = `${member}${delimiter}${name}`;
  if (full.length <= MAX_NAME_LENGTH) return full;
  return `${full.slice(0, MAX_NAME_LENGTH - 9)}_${fnv1a(full)}`;
}
