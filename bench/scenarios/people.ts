/**
 * Scenario 11, people per machine: how many people one machine serves with the demo stdio
 * server (server-everything) under `share: session`, `person` and `all`. Each simulated person
 * holds two 2025-11-25 sessions with their GET streams open, every fourth is also a 2026 client;
 * calls are paced at `--rate` (default 17/s: 1,000 people calling once a minute) and spread
 * over everyone. Reported per mode: processes, resident memory of the gateway and of all
 * backend processes, the gateway's CPU per call, and p50/p99 against the same server called
 * over its pipes at the same pace. A last `all` run with more people shows what the gateway
 * itself costs per person, and what 1,000 people would take.
 *
 *   deno task bench --only 11 --no-write [--people 10] [--people-all 100] [--rate 17]
 */
import { BENCH_TOKEN, startGateway } from "../lib/gateway.ts";
import { expectResult } from "../lib/load.ts";
import { directClient, openPeople, paced, personToken, quantile } from "../lib/people.ts";
import { childPids, cpuSpent, readCpu, rssBytes, sleep } from "../lib/processes.ts";
import type { Results } from "../lib/report.ts";
import { DENO_DIR_YAML } from "../../tests/fixtures/deno_dir.ts";

const EVERYTHING = "npm:@modelcontextprotocol/server-everything@2026.8.31";
const COMMAND = ["deno", "run", "-A", "--no-config", EVERYTHING, "stdio"];
const SCENARIO = "11 people per machine";
const MiB = 1024 * 1024;
const MODERN_EVERY = 4;
const TARGET_GATEWAY_SHARE = 0.05;
const TARGET_P50 = 0.3;
const TARGET_P99 = 2;
const QUIET_MS = 3000;

function flag(name: string, fallback: number): number {
  const at = Deno.args.indexOf(name);
  return at >= 0 ? Number(Deno.args[at + 1]) : fallback;
}

interface Mode {
  share: "session" | "person" | "all";
  people: number;
  processes?: number;
}

/** A process and its descendants (a backend started through `deno run` has none of its own). */
function tree(pid: number): number[] {
  return childPids(pid).flatMap((child) => [child, ...tree(child)]);
}

function serverYaml(mode: Mode): string {
  const tokens = Array.from({ length: mode.people }, (_, i) => JSON.stringify(personToken(i)));
  return `  demo:
    transport: stdio
    command: ${COMMAND[0]}
    args: [${COMMAND.slice(1).map((arg) => JSON.stringify(arg)).join(", ")}]
    env: { ${DENO_DIR_YAML} }
    serviceAuths: [{ type: bearer, tokens: [${
    [...tokens, JSON.stringify(BENCH_TOKEN)].join(", ")
  }] }]
    share: ${mode.share}
${mode.processes ? `    processes: ${mode.processes}\n` : ""}`;
}

export async function people(results: Results, calls: number): Promise<void> {
  const small = flag("--people", 10);
  const large = flag("--people-all", 100);
  const rate = flag("--rate", 17);
  const count = Math.min(calls, rate * 20);
  // Fetched once with this process's environment; the gateway's children start from the cache.
  const cached = await new Deno.Command("deno", { args: ["cache", "--no-config", EVERYTHING] })
    .output();
  if (cached.code !== 0) throw new Error(`deno cache ${EVERYTHING} failed`);

  const direct = await directClient(COMMAND);
  let baseline: Float64Array;
  try {
    for (let i = 0; i < 200; i++) await direct.call();
    baseline = await paced(() => direct.call(), count, rate);
  } finally {
    await direct.stop();
  }
  const directP50 = quantile(baseline, 0.5);
  const directP99 = quantile(baseline, 0.99);
  results.add({
    scenario: SCENARIO,
    case: `server-everything over its pipes, no gateway, ${rate} calls/s`,
    rate,
    p50: directP50,
    p99: directP99,
  });

  const modes: Mode[] = [
    { share: "session", people: small },
    { share: "person", people: small },
    { share: "all", people: small, processes: 2 },
    { share: "all", people: large, processes: 2 },
  ];
  for (const mode of modes) {
    const gateway = await startGateway(serverYaml(mode));
    try {
      const url = `${gateway.url}/demo/mcp`;
      await sleep(1000);
      const idleRss = rssBytes(gateway.pid);
      const crowd = await openPeople(url, mode.people, MODERN_EVERY);
      const label = `share: ${mode.share}${
        mode.processes ? ` (processes: ${mode.processes})` : ""
      }, ${mode.people} people`;
      try {
        // Warm the paths (JIT, each process's first call) before measuring.
        await Promise.all(crowd.callers.map(async (caller) => {
          expectResult(await caller.call(), label);
        }));
        await sleep(2000);
        const gatewayRss = rssBytes(gateway.pid);
        const backends = tree(gateway.pid);
        const backendRss = backends.reduce((sum, pid) => sum + rssBytes(pid), 0);
        // What the gateway spends with nobody calling (streams held, timers): at one call a
        // minute per person this, not the calls, is most of its CPU.
        const quietFrom = readCpu(gateway.pid);
        const quietStart = performance.now();
        await sleep(QUIET_MS);
        const idleUsPerSecond = cpuSpent(quietFrom, readCpu(gateway.pid)) /
          ((performance.now() - quietStart) / 1000);
        const gatewayCpu = readCpu(gateway.pid);
        const backendCpu = backends.map((pid) => readCpu(pid));
        const callsStart = performance.now();
        const latencies = await paced(
          async (i) => {
            const caller = crowd.callers[i % crowd.callers.length];
            expectResult(await caller.call(), label);
          },
          count,
          rate,
        );
        const callSeconds = (performance.now() - callsStart) / 1000;
        const spent = cpuSpent(gatewayCpu, readCpu(gateway.pid));
        // The calls' own CPU: what was spent beyond the quiet rate over the same time.
        const proxyCpuUs = Math.max(0, spent - idleUsPerSecond * callSeconds) / count;
        const backendCpuUs = backends.reduce(
          (sum, pid, i) => sum + cpuSpent(backendCpu[i], readCpu(pid)),
          0,
        ) / count;
        const p50 = quantile(latencies, 0.5);
        const p99 = quantile(latencies, 0.99);
        const addedP50 = p50 - directP50;
        const addedP99 = p99 - directP99;
        const sessions = mode.people * 2;
        const modern = Math.ceil(mode.people / MODERN_EVERY);
        results.add({
          scenario: SCENARIO,
          case: `${label}: ${sessions} sessions with GET streams, ${modern} 2026 clients`,
          rate,
          p50,
          p99,
          proxyCpuUs,
          backendCpuUs,
          target: `added p50 ≤ ${TARGET_P50} ms (${addedP50.toFixed(2)}), p99 ≤ ${TARGET_P99} ms (${
            addedP99.toFixed(2)
          })`,
          met: addedP50 <= TARGET_P50 && addedP99 <= TARGET_P99,
        });
        results.add({
          scenario: SCENARIO,
          case: `${label}: gateway CPU with nobody calling (not in the CPU per call above)`,
          value: idleUsPerSecond / 1000,
          unit: "ms/s",
        });
        const perPerson = mode.share === "person";
        results.add({
          scenario: SCENARIO,
          case: `${label}: backend processes`,
          value: backends.length,
          unit: "processes",
          ...(perPerson && {
            target: `one per person (${mode.people})`,
            met: backends.length === mode.people,
          }),
        });
        results.add({
          scenario: SCENARIO,
          case: `${label}: RSS of all backend processes`,
          value: backendRss / MiB,
          unit: "MiB",
        });
        const share = gatewayRss / (gatewayRss + backendRss);
        results.add({
          scenario: SCENARIO,
          case: `${label}: RSS of the gateway (idle at start ${(idleRss / MiB).toFixed(0)} MiB)`,
          value: gatewayRss / MiB,
          unit: "MiB",
          ...(perPerson && {
            target: `≤ ${TARGET_GATEWAY_SHARE * 100}% of the memory in use (${
              (share * 100).toFixed(1)
            }%)`,
            met: share <= TARGET_GATEWAY_SHARE,
          }),
        });
        results.add({
          scenario: SCENARIO,
          case: `${label}: gateway memory per person (2 sessions, 2 streams)`,
          value: (gatewayRss - idleRss) / mode.people / 1024,
          unit: "KiB",
        });
        if (mode.people === large && mode.share === "all") {
          // 1,000 people: the gateway's memory grows per person, the pool's does not; the CPU
          // of 1,000 calls a minute is what the two cores must give.
          const gatewayGiB = (idleRss + (gatewayRss - idleRss) / mode.people * 1000) / (1024 * MiB);
          results.add({
            scenario: SCENARIO,
            case: "projected, share: all, 1,000 people: gateway + pool RSS",
            value: gatewayGiB + backendRss / (1024 * MiB),
            unit: "GiB",
          });
          results.add({
            scenario: SCENARIO,
            case:
              "projected, share: all, 1,000 people at 1 call/min: CPU of two cores (calls and the gateway's quiet cost per person)",
            value:
              ((proxyCpuUs + backendCpuUs) * (1000 / 60) + idleUsPerSecond / mode.people * 1000) /
              1e6 / 2 * 100,
            unit: "%",
          });
        }
      } finally {
        crowd.close();
      }
    } finally {
      await gateway.stop();
    }
  }
}
