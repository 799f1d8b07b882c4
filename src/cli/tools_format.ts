/** How `gatehouse tools` prints tool records: a table and diffs for people, JSON for scripts. */
import { createHash } from "node:crypto";
import type { ToolRecord } from "../mcp/tools/tool_ledger.ts";
import { printable } from "./terminal_text.ts";

function minute(ms: number | undefined): string {
  return ms === undefined ? "-" : new Date(ms).toISOString().slice(0, 16).replace("T", " ");
}

function iso(ms: number | undefined): string | null {
  return ms === undefined ? null : new Date(ms).toISOString();
}

/** One JSON array; with `full`, the approved and held definitions themselves. */
export function recordsJson(records: ToolRecord[], full: boolean): string {
  return JSON.stringify(
    records.map((record) => ({
      server: record.server,
      tool: record.tool,
      state: record.held ? "held" : "approved",
      approved: record.approved
        ? {
          digest: record.approved.digest,
          by: record.approved.by,
          at: iso(record.approved.at),
          ...(full && { definition: record.approved.definition ?? null }),
        }
        : null,
      held: record.held
        ? {
          digest: record.held.digest,
          since: iso(record.held.at),
          change: record.approved ? "changed" : "new",
          changes: record.held.changes,
          refused: record.held.refused
            ? { by: record.held.refused.by, at: iso(record.held.refused.at) }
            : null,
          ...(full && { definition: record.held.definition ?? null }),
        }
        : null,
    })),
    null,
    2,
  );
}

const COLUMNS = ["SERVER", "TOOL", "STATE", "DIGEST", "SINCE (UTC)"];
const MAX_WIDTH = 48;

/** Aligned columns; the digest is the one served (approved) or waiting (held), in full. */
export function recordsTable(records: ToolRecord[]): string {
  const rows = records.map((record) =>
    [
      record.server,
      record.tool,
      record.held
        ? `HELD (${record.approved ? "changed" : "new"}${record.held.refused ? ", refused" : ""})`
        : `approved (${record.approved?.by ?? "?"})`,
      record.held?.digest ?? record.approved?.digest ?? "-",
      minute(record.held?.at ?? record.approved?.at),
    ].map((text, i) => i === 3 ? text : cell(text))
  );
  const widths = COLUMNS.map((title, i) =>
    Math.max(title.length, ...rows.map((row) => row[i].length))
  );
  return [COLUMNS, ...rows]
    .map((row) => row.map((text, i) => text.padEnd(widths[i])).join("  ").trimEnd())
    .join("\n");
}

/** One held tool: what is approved, what was seen, and the change field by field. */
export function diffText(record: ToolRecord): string {
  const held = record.held!;
  const lines = [
    `${cell(record.server)} ${cell(record.tool)}: ${
      record.approved ? "changed" : "new"
    }, held since ${minute(held.at)} UTC`,
    record.approved
      ? `  approved  ${record.approved.digest} (${record.approved.by}, ${
        minute(record.approved.at)
      } UTC)`
      : "  approved  - (never)",
    `  seen      ${held.digest}`,
    ...held.changes.map((change) => `    ${printable(change)}`),
    `  approve with: gatehouse tools approve ${record.server} ${
      quoted(record.tool)
    } --digest ${held.digest}`,
  ];
  return lines.join("\n");
}

function cell(text: string): string {
  const shown = printable(text);
  return shown.length > MAX_WIDTH ? `${shown.slice(0, MAX_WIDTH - 1)}…` : shown;
}

/** A tool name as a shell argument: as it is when plain, else in single quotes. */
function quoted(name: string): string {
  return /^[A-Za-z0-9_.\-/]+$/.test(name) ? name : `'${printable(name).replace(/'/g, `'\\''`)}'`;
}

/**
 * The digest of a set of held definitions (each tool's name and held digest): what
 * `tools approve SERVER --digest` takes, so that a whole server's approval covers exactly the
 * definitions its diff showed.
 */
export function reviewDigest(records: ToolRecord[]): string {
  const lines = records
    .filter((record) => record.held)
    .map((record) => `${record.tool}\u0000${record.held!.digest}\n`)
    .sort();
  return createHash("sha256").update(lines.join("")).digest("hex");
}

/** The last line of a whole server's diff: the command that approves what it showed. */
export function approveAllText(server: string, records: ToolRecord[], newOnly: boolean): string {
  const count = records.length;
  return `approve ${count === 1 ? "it" : `all ${count} shown`} at once: gatehouse tools approve ${
    quoted(server)
  }${newOnly ? " --new" : ""} --digest ${reviewDigest(records)}`;
}
