/**
 * `deno task bench`: starts everything on 127.0.0.1 (backends, the gateway, the peers), runs
 * bounded scenarios, prints the table, writes bench/results/latest.json and the generated
 * section of docs/benchmarks.md.
 *
 *   deno task bench [--calls N] [--only 1,2,…] [--no-write]
 *
 * `--only floor` runs the scenarios whose figures issue 20's proxy floor asks for, in one run:
 * 2 (stdio against the peers, added latency), 5 (memory per stream), nginx (CPU per call
 * against nginx; skipped with a line where nginx is not installed).
 */
import { httpCalls } from "./scenarios/http_calls.ts";
import { authCost } from "./scenarios/auth.ts";
import { stdioPeers } from "./scenarios/stdio_peers.ts";
import { aggregate } from "./scenarios/aggregate.ts";
import { sessions } from "./scenarios/sessions.ts";
import { startup } from "./scenarios/startup.ts";
import { memory } from "./scenarios/memory.ts";
import { front } from "./scenarios/front.ts";
import { frontAndTls } from "./scenarios/front_tls.ts";
import { revisions } from "./scenarios/revisions.ts";
import { policyCost } from "./scenarios/policy.ts";
import { tracingCost } from "./scenarios/tracing.ts";
import { nginxAnchor } from "./scenarios/nginx_anchor.ts";
import { people } from "./scenarios/people.ts";
import { tokenGrants } from "./scenarios/token_grants.ts";
import { storageEngines } from "./scenarios/storage_engines.ts";
import { machine } from "./lib/processes.ts";
import { format, markdownSection, Results, type RunInfo, updateDoc } from "./lib/report.ts";

const ROOT = new URL("../", import.meta.url).pathname;

function flag(name: string): string | undefined {
  const at = Deno.args.indexOf(name);
  return at >= 0 ? Deno.args[at + 1] : undefined;
}

const calls = Number(flag("--calls") ?? 5000);
/** Names for sets of scenarios, usable in `--only`. */
const GROUPS: Record<string, string[]> = { floor: ["2", "5", "nginx"] };
const only = flag("--only")?.split(",").flatMap((id) => GROUPS[id] ?? [id]);
const write = !Deno.args.includes("--no-write");

const SCENARIOS: [string, (results: Results, calls: number) => Promise<void>][] = [
  ["1", httpCalls],
  ["1a", authCost],
  ["2", stdioPeers],
  ["3", aggregate],
  ["4", sessions],
  ["5", memory],
  ["6", startup],
  ["7", front],
  ["8", revisions],
  ["9", policyCost],
  ["10", tracingCost],
  ["11", people],
  ["12", frontAndTls],
  ["13", tokenGrants],
  ["14", storageEngines],
  ["nginx", nginxAnchor],
];

const results = new Results();
const started = performance.now();
for (const [id, scenario] of SCENARIOS) {
  if (only && !only.includes(id)) continue;
  console.error(`scenario ${id}…`);
  await scenario(results, calls);
}
const info: RunInfo = {
  date: new Date().toISOString(),
  command: `deno task bench${Deno.args.length ? ` ${Deno.args.join(" ")}` : ""}`,
  machine: machine(),
  versions: { deno: Deno.version.deno, v8: Deno.version.v8, gatehouse: await gatehouseVersion() },
  callsPerScenario: calls,
  durationSeconds: (performance.now() - started) / 1000,
};
console.log(format(results.rows).join("\n"));
if (write) {
  await Deno.mkdir(`${ROOT}bench/results`, { recursive: true });
  await Deno.writeTextFile(
    `${ROOT}bench/results/latest.json`,
    JSON.stringify({ ...info, rows: results.rows }, null, 2) + "\n",
  );
  await updateDoc(`${ROOT}docs/benchmarks.md`, markdownSection(info, results.rows));
  // The project's formatter owns the file's layout (`deno task ok` checks it).
  await new Deno.Command("deno", { args: ["fmt", "-q", `${ROOT}docs/benchmarks.md`] }).output();
  console.log("wrote bench/results/latest.json and docs/benchmarks.md");
}

async function gatehouseVersion(): Promise<string> {
  const config = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
  const commit = await new Deno.Command("git", {
    args: ["rev-parse", "--short", "HEAD"],
    cwd: ROOT,
  })
    .output().then((o) => new TextDecoder().decode(o.stdout).trim(), () => "");
  return commit ? `${config.version} (${commit})` : config.version;
}
