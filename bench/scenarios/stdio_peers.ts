/**
 * Scenario 2: `tools/call` to one stdio server (the minimal fixture) fronted by Gatehouse, by
 * npm:mcp-proxy and by npm:supergateway, each over Streamable HTTP at concurrency 1 and 50.
 * The peers run under Deno, like everything here. At concurrency 1 the same server is also
 * called straight over its pipes, one call at a time: the latency with no proxy at all, from
 * which each front's added p50 is taken.
 */
import { ROOT, startGateway, stdioServer } from "../lib/gateway.ts";
import { type LoadResult, medianOf, openSession, request, runLoad } from "../lib/load.ts";
import { freePort, type Running, startDeno, terminate, waitForOk } from "../lib/processes.ts";
import type { Results } from "../lib/report.ts";

export const MCP_PROXY = "npm:mcp-proxy@6.7.19";
export const SUPERGATEWAY = "npm:supergateway@4.0.0";
const TARGET_VS_PEERS = 2;
const TARGET_CPU_US = 60;
const TARGET_ADDED_P50 = 0.3;
const SERVER = `${ROOT}tests/fixtures/minimal_server.ts`;
const ROUNDS = 3;
/** The peers are locked in deno.lock, the tests' and bench's lock, not the gateway's. */
const TEST_CONFIG = ["--config", `${ROOT}deno.test.json`];

async function startPeer(kind: "mcp-proxy" | "supergateway"): Promise<Running & { url: string }> {
  const port = freePort();
  const child = `deno run ${SERVER}`;
  const args = kind === "mcp-proxy"
    ? [
      "run",
      "-A",
      ...TEST_CONFIG,
      MCP_PROXY,
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
      "--",
      "deno",
      "run",
      SERVER,
    ]
    : [
      "run",
      "-A",
      ...TEST_CONFIG,
      SUPERGATEWAY,
      "--stdio",
      child,
      "--outputTransport",
      "streamableHttp",
      "--stateful",
      "--port",
      String(port),
      "--logLevel",
      "none",
    ];
  const running = await startDeno(args);
  const url = `http://127.0.0.1:${port}/mcp`;
  // Either answers something on /mcp once it listens; a GET without a session is refused.
  await waitForListening(port);
  return { ...running, url };
}

async function waitForListening(port: number): Promise<void> {
  for (let i = 0; i < 600; i++) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`nothing listens on ${port}`);
}

interface Latency {
  rate: number;
  p50: number;
  p99: number;
}

/** A client of the stdio server itself: newline-delimited JSON-RPC over its stdin and stdout. */
async function startDirect() {
  const child = new Deno.Command("deno", {
    args: ["run", SERVER],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const reader = child.stdout.getReader();
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  let pending = "";
  const send = (message: string) => writer.write(encoder.encode(message + "\n"));
  const roundTrip = async (message: string): Promise<Record<string, unknown>> => {
    await send(message);
    for (;;) {
      const newline = pending.indexOf("\n");
      if (newline >= 0) {
        const answer = JSON.parse(pending.slice(0, newline));
        pending = pending.slice(newline + 1);
        if (answer.id !== undefined) return answer;
        continue;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error("the stdio server ended");
      pending += decoder.decode(value, { stream: true });
    }
  };
  const init = await roundTrip(request("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "gatehouse-bench", version: "1.0.0" },
  }));
  if (!init.result) throw new Error(`direct initialize: ${JSON.stringify(init)}`);
  await send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
  const call = async () => {
    const answer = await roundTrip(
      request("tools/call", { name: "echo", arguments: { n: 1 } }),
    );
    if (!answer.result) throw new Error(`direct call: ${JSON.stringify(answer)}`);
  };
  return {
    async run(calls: number): Promise<Latency> {
      for (let i = 0; i < Math.max(500, calls / 5); i++) await call();
      const latencies = new Float64Array(calls);
      const started = performance.now();
      for (let i = 0; i < calls; i++) {
        const t0 = performance.now();
        await call();
        latencies[i] = performance.now() - t0;
      }
      const seconds = (performance.now() - started) / 1000;
      latencies.sort();
      const at = (q: number) => latencies[Math.min(calls - 1, Math.floor(q * calls))];
      return { rate: calls / seconds, p50: at(0.5), p99: at(0.99) };
    },
    async stop() {
      await writer.close().catch(() => {});
      await reader.cancel().catch(() => {});
      // Its stdin closed is its signal to end.
      await terminate(child, null);
    },
  };
}

export async function stdioPeers(results: Results, calls: number): Promise<void> {
  const gateway = await startGateway(stdioServer("stdio", SERVER, [], "    public: true\n"));
  await waitForOk(`${gateway.url}/health`);
  const peers = [await startPeer("mcp-proxy"), await startPeer("supergateway")];
  const fronts: [string, string, number][] = [
    ["Gatehouse", `${gateway.url}/stdio/mcp`, gateway.pid],
    ["mcp-proxy", peers[0].url, peers[0].pid],
    ["supergateway", peers[1].url, peers[1].pid],
  ];
  let direct: Awaited<ReturnType<typeof startDirect>> | undefined;
  try {
    direct = await startDirect();
    for (const concurrency of [1, 50]) {
      // The three alternate, three times; each figure is the median of its three runs.
      const runs = fronts.map(() => [] as LoadResult[]);
      const directRuns: Latency[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        if (concurrency === 1) directRuns.push(await direct.run(Math.ceil(calls / ROUNDS)));
        for (const [i, [, url, pid]] of fronts.entries()) {
          const endpoint = { url };
          runs[i].push(
            await runLoad({
              endpoint,
              session: await openSession(endpoint),
              body: () => request("tools/call", { name: "echo", arguments: { n: 1 } }),
              calls: Math.ceil(calls / ROUNDS),
              concurrency,
              watch: { proxy: pid },
            }),
          );
        }
      }
      const measured = fronts.map(([name], i) => [name, medianOf(runs[i])] as const);
      const bestPeer = Math.max(...measured.slice(1).map(([, r]) => r.rate));
      const directP50 = directRuns.length ? medianOf(directRuns.map(asLoad)).p50 : undefined;
      if (directRuns.length) {
        const { rate, p50, p99 } = medianOf(directRuns.map(asLoad));
        results.add({
          scenario: "2 stdio tools/call",
          case: `the server over its pipes, no proxy, c=${concurrency}`,
          rate,
          p50,
          p99,
        });
      }
      for (const [name, result] of measured) {
        const ours = name === "Gatehouse";
        const ratio = result.rate / bestPeer;
        const cpu = result.cpuPerCall.proxy;
        const targets = [`≥ ${TARGET_VS_PEERS}× best peer`, `CPU ≤ ${TARGET_CPU_US} µs`];
        let met = ratio >= TARGET_VS_PEERS && cpu <= TARGET_CPU_US;
        if (directP50 !== undefined) {
          const added = result.p50 - directP50;
          targets.push(`added p50 ≤ ${TARGET_ADDED_P50} ms (${added.toFixed(2)})`);
          met &&= added <= TARGET_ADDED_P50;
        }
        results.add({
          scenario: "2 stdio tools/call",
          case: `${name}, c=${concurrency}`,
          rate: result.rate,
          p50: result.p50,
          p99: result.p99,
          proxyCpuUs: cpu,
          ratio,
          ...(ours && { target: targets.join("; "), met }),
        });
      }
    }
  } finally {
    await Promise.all([gateway.stop(), ...peers.map((p) => p.stop()), direct?.stop()]);
  }
}

function asLoad(latency: Latency): LoadResult {
  return { calls: 0, ...latency, cpuPerCall: {} };
}
