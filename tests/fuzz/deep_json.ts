/**
 * Messages nested around the gateway's depth limit (128, src/core/json_depth.ts) and far past
 * it, in each place a client puts JSON: tool arguments, a 2026 retry's inputResponses, unknown
 * params; on the session lane and with the 2026-07-28 envelope. Past the limit each must get
 * 400 (-32600), never a 500 from code that walks the value.
 */
import type { Random } from "./random.ts";

const DEPTHS = [1, 120, 124, 125, 126, 127, 128, 129, 130, 1_000, 100_000];

/**
 * JSON text nesting arrays and objects `depth` levels deep around `inner`, written as text
 * (a value that deep is not built, so JSON.stringify's own limits do not decide the case);
 * sometimes with brackets and escaped quotes inside strings, which must not count.
 */
function nested(r: Random, depth: number, inner = "1"): string {
  const decoy = r.chance(0.3) ? `"[[{{\\\"]]${"[".repeat(r.int(300))}",` : "";
  if (r.chance(0.5)) return "[".repeat(depth) + decoy + inner + "]".repeat(depth);
  return '{"a":'.repeat(depth) + inner + "}".repeat(depth);
}

/** A tools/call (session or 2026 envelope) whose arguments nest near or past the limit. */
export function deepCall(r: Random, tool: string, modern: boolean): string {
  const deep = nested(r, r.pick(DEPTHS));
  const meta = modern
    ? ',"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",' +
      '"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}'
    : "";
  const where = r.int(3);
  const args = where === 0 ? `{"deep":${deep}}` : "{}";
  const extra = where === 1 ? `,"inputResponses":${deep}` : where === 2 ? `,"x":${deep}` : "";
  return `{"jsonrpc":"2.0","id":${r.int(1_000)},"method":"tools/call","params":` +
    `{"name":"${tool}","arguments":${args}${extra}${meta}}}`;
}
