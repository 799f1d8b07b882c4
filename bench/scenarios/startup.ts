/**
 * Scenario 6: process start to `/health` answering 200, for the gateway on a configuration like
 * the shipped one (a stdio demo server, a local KV file), with a warm dependency cache.
 */
import { RUNTIME_PERMISSIONS } from "../../scripts/compile.ts";
import { ROOT } from "../lib/gateway.ts";
import { freePort } from "../lib/processes.ts";
import type { Results } from "../lib/report.ts";
import { DENO_DIR_ENV, DENO_DIR_YAML } from "../../tests/fixtures/deno_dir.ts";

const RUNS = 7;
const TARGET_MS = 300;

async function timeToHealthy(config: string, port: number): Promise<number> {
  const started = performance.now();
  const child = new Deno.Command("deno", {
    args: ["run", ...RUNTIME_PERMISSIONS, `${ROOT}main.ts`, "serve", "--config", config],
    env: { PATH: Deno.env.get("PATH") ?? "", HOME: Deno.env.get("HOME") ?? "", ...DENO_DIR_ENV },
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    for (let attempt = 0; attempt < 10_000; attempt++) {
      try {
        const response = await fetch(`http://127.0.0.1:${port}/health`);
        await response.body?.cancel();
        if (response.ok) return performance.now() - started;
      } catch { /* not yet */ }
      await new Promise((r) => setTimeout(r, 2));
    }
    throw new Error("the gateway did not become healthy");
  } finally {
    child.kill("SIGTERM");
    await child.status;
  }
}

export async function startup(results: Results): Promise<void> {
  // The scenario before may still be tearing down thousands of connections and processes.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-bench-start-" });
  try {
    const times: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const port = freePort();
      const config = `${dir}/config.yaml`;
      await Deno.writeTextFile(
        config,
        `listen: 127.0.0.1:${port}
storage: ${dir}/gatehouse-${run}.kv
secret: bench-master-secret-0123456789-abcdefghijklmnop
servers:
  demo:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts"]
    serviceAuths: [{ type: bearer, tokens: ["dev-token"] }]
`,
      );
      times.push(await timeToHealthy(config, port));
    }
    times.sort((a, b) => a - b);
    const median = times[Math.floor(RUNS / 2)];
    results.add({
      scenario: "6 start-up",
      case: `process start to /health 200 (median of ${RUNS}, fresh KV file)`,
      value: median,
      unit: "ms",
      target: `≤ ${TARGET_MS} ms`,
      met: median <= TARGET_MS,
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
