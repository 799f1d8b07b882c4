/**
 * Scenario 2: `tools/call` to one stdio server (the minimal fixture) fronted by Gatehouse, by
 * npm:mcp-proxy and by npm:supergateway, each over Streamable HTTP at concurrency 1 and 50.
 * The peers run under Deno, like everything here.
 */
import { ROOT, startGateway, stdioServer } from "../lib/gateway.ts";
import { type LoadResult, medianOf, openSession, request, runLoad } from "../lib/load.ts";
import { freePort, type Running, startDeno, waitForOk } from "../lib/processes.ts";
import type { Results } from "../lib/report.ts";

export const MCP_PROXY = "npm:mcp-proxy@6.7.19";
export const SUPERGATEWAY = "npm:supergateway@4.0.0";
const TARGET_VS_PEERS = 2;
const TARGET_CPU_US = 60;
const SERVER = `${ROOT}tests/fixtures/minimal_server.ts`;
const ROUNDS = 3;

async function startPeer(kind: "mcp-proxy" | "supergateway"): Promise<Running & { url: string }> {
  const port = freePort();
  const child = `deno run ${SERVER}`;
  const args = kind === "mcp-proxy"
    ? [
      "run",
      "-A",
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

export async function stdioPeers(results: Results, calls: number): Promise<void> {
  const gateway = await startGateway(stdioServer("stdio", SERVER, [], "    public: true\n"));
  await waitForOk(`${gateway.url}/health`);
  const peers = [await startPeer("mcp-proxy"), await startPeer("supergateway")];
  const fronts: [string, string, number][] = [
    ["Gatehouse", `${gateway.url}/stdio/mcp`, gateway.pid],
    ["mcp-proxy", peers[0].url, peers[0].pid],
    ["supergateway", peers[1].url, peers[1].pid],
  ];
  try {
    for (const concurrency of [1, 50]) {
      // The three alternate, three times; each figure is the median of its three runs.
      const runs = fronts.map(() => [] as LoadResult[]);
      for (let round = 0; round < ROUNDS; round++) {
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
      for (const [name, result] of measured) {
        const ours = name === "Gatehouse";
        const ratio = result.rate / bestPeer;
        const cpu = result.cpuPerCall.proxy;
        results.add({
          scenario: "2 stdio tools/call",
          case: `${name}, c=${concurrency}`,
          rate: result.rate,
          p50: result.p50,
          p99: result.p99,
          proxyCpuUs: cpu,
          ratio,
          ...(ours && {
            target: `≥ ${TARGET_VS_PEERS}× best peer; CPU ≤ ${TARGET_CPU_US} µs`,
            met: ratio >= TARGET_VS_PEERS && cpu <= TARGET_CPU_US,
          }),
        });
      }
    }
  } finally {
    await Promise.all([gateway.stop(), ...peers.map((p) => p.stop())]);
  }
}
