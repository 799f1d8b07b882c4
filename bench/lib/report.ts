/**
 * The bench's results: rows gathered by the scenarios, printed as a table, written to
 * bench/results/latest.json and into docs/benchmarks.md between its generated-section markers.
 */

/** One measured figure, with the target it is judged against when the issue sets one. */
export interface Row {
  scenario: string;
  case: string;
  /** Calls per second, p50 and p99 in ms, for load rows. */
  rate?: number;
  p50?: number;
  p99?: number;
  /** CPU µs per call spent by the proxy (Gatehouse or a peer) and by the backend. */
  proxyCpuUs?: number;
  backendCpuUs?: number;
  /** Throughput relative to the scenario's reference row (direct, or the best peer). */
  ratio?: number;
  /** A single figure (memory, start-up) with its unit. */
  value?: number;
  unit?: string;
  target?: string;
  met?: boolean;
}

export class Results {
  readonly rows: Row[] = [];

  add(row: Row): Row {
    this.rows.push(row);
    console.error(`  ${format([row])[2]}`);
    return row;
  }
}

const COLUMNS = [
  "scenario",
  "case",
  "calls/s",
  "p50 ms",
  "p99 ms",
  "proxy CPU µs/call",
  "backend CPU µs/call",
  "ratio",
  "value",
  "target",
] as const;

const fixed = (n: number | undefined, digits: number) => n === undefined ? "" : n.toFixed(digits);

function cells(row: Row): string[] {
  return [
    row.scenario,
    row.case,
    fixed(row.rate, 0),
    fixed(row.p50, 2),
    fixed(row.p99, 2),
    fixed(row.proxyCpuUs, 0),
    fixed(row.backendCpuUs, 0),
    fixed(row.ratio, 2),
    row.value === undefined ? "" : `${fixed(row.value, row.value < 10 ? 2 : 0)} ${row.unit ?? ""}`,
    row.target === undefined ? "" : `${row.target} ${row.met ? "✓" : "✗"}`,
  ];
}

/** A Markdown table (also readable as plain text). */
export function format(rows: Row[]): string[] {
  const header = `| ${COLUMNS.join(" | ")} |`;
  const rule = `|${
    COLUMNS.map((c) => c === "scenario" || c === "case" ? "---|" : "--:|").join("")
  }`;
  return [header, rule, ...rows.map((row) => `| ${cells(row).join(" | ")} |`)];
}

export interface RunInfo {
  date: string;
  command: string;
  machine: { cpu: string; cores: number; os: string; memoryGiB: number };
  versions: Record<string, string>;
  callsPerScenario: number;
  durationSeconds: number;
}

const BEGIN = "<!-- bench:begin (written by `deno task bench`; edit outside these markers) -->";
const END = "<!-- bench:end -->";

/** The generated section of docs/benchmarks.md. */
export function markdownSection(info: RunInfo, rows: Row[]): string {
  const versions = Object.entries(info.versions).map(([k, v]) => `${k} ${v}`).join(", ");
  return [
    BEGIN,
    "",
    `Run ${info.date} with \`${info.command}\` (${info.callsPerScenario} calls per load case, ` +
    `${Math.round(info.durationSeconds)} s in all).`,
    "",
    `- Machine: ${info.machine.cpu}, ${info.machine.cores} cores, ${info.machine.memoryGiB} GiB, ` +
    `${info.machine.os}. Load generator, backends, peers and gateway share these cores.`,
    `- Versions: ${versions}.`,
    "",
    ...format(rows),
    "",
    END,
  ].join("\n");
}

/** Replaces the generated section of `file` (or appends one). */
export async function updateDoc(file: string, section: string): Promise<void> {
  let text = "";
  try {
    text = await Deno.readTextFile(file);
  } catch { /* written fresh */ }
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  const next = begin >= 0 && end > begin
    ? text.slice(0, begin) + section + text.slice(end + END.length)
    : `${text}${text && !text.endsWith("\n") ? "\n" : ""}\n${section}\n`;
  await Deno.writeTextFile(file, next);
}
