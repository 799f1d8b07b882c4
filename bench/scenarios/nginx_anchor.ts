/**
 * Scenario `nginx` (issue 20, the proxy floor): the gateway's CPU per proxied `tools/call` next
 * to nginx's, in the same run, to the same backend processes (the bench's minimal HTTP server,
 * answering JSON and answering SSE), at concurrency 1 and 50. nginx runs one worker with
 * kept-alive connections to the upstream (bench/lib/nginx.ts); its CPU is its worker's plus its
 * master's, read from /proc like the gateway's. The gateway is called with a static bearer
 * token, as a 2025-11-25 session call and as a 2026-07-28 stateless call (scenario 8's two
 * forms). Beside them, the design card's own floor: a bare `Deno.serve` handler passing bytes
 * to the backend (bench/backends/bare_proxy.ts), on the port and behind the TCP front. Direct,
 * nginx, the two gateway calls and the two floors alternate three times, `--calls` calls each
 * run; each figure is the median. The JSON backend is also called with 64 KiB of arguments,
 * answered with as much, at c=10 (half as many calls). Skipped, with a line saying so, where
 * nginx is not installed.
 */
import { BENCH_TOKEN, ROOT, startGateway } from "../lib/gateway.ts";
import {
  type Endpoint,
  type LoadResult,
  medianOf,
  openSession,
  request,
  runLoad,
} from "../lib/load.ts";
import { findNginx, startNginx } from "../lib/nginx.ts";
import { startListening } from "../lib/processes.ts";
import type { Results } from "../lib/report.ts";

const ROUNDS = 3;
const TARGET_VS_NGINX = 3;
const MODERN = "2026-07-28";
/**
 * The card's floor (bench/backends/bare_proxy.ts): `Deno.serve` passing bytes to the backend
 * and back, with nothing of the gateway's own, on the TCP port and behind the TCP front.
 */
const BARE = ["serve", "front"] as const;
const BARE_LABELS = {
  serve: "bare Deno.serve pass-through",
  front: "bare Deno.serve pass-through behind the TCP front",
};
/** The usual tiny call, and one whose arguments and answer are 64 KiB each. */
const SMALL_CALL = { name: "echo", arguments: { n: 1 } };
const LARGE_CALL = { name: "echo", arguments: { text: "x".repeat(64 * 1024) } };

interface Kind {
  endpoint: Endpoint;
  session: boolean;
  body: () => string;
  watch: Record<string, number>;
}

const MODES = [
  { name: "json", label: "minimal, JSON", streaming: false },
  { name: "sse", label: "minimal, SSE", streaming: true },
];

export async function nginxAnchor(results: Results, calls: number): Promise<void> {
  const binary = findNginx();
  if (!binary) {
    console.log(
      "nginx anchor skipped: no nginx on the PATH or in /usr/sbin (Debian: apt-get install " +
        "nginx-light); the gateway's CPU per call is not compared with nginx in this run",
    );
    return;
  }
  const backends = await Promise.all(MODES.map(async (mode) => ({
    ...mode,
    process: await startListening(
      ["--allow-net", `${ROOT}bench/backends/minimal_http.ts`, "0", mode.name],
      "/mcp",
    ),
  })));
  const stops: (() => Promise<void>)[] = backends.map((b) => b.process.stop);
  try {
    const nginx = await startNginx(
      binary,
      backends.map((b) => ({
        name: b.name,
        address: new URL(b.process.url).host,
        streaming: b.streaming,
      })),
    );
    stops.push(nginx.stop);
    const gateway = await startGateway(
      backends.map((b) =>
        `  ${b.name}:
    transport: streamable-http
    url: ${b.process.url}
    serviceAuths: [{ type: bearer, tokens: ["${BENCH_TOKEN}"] }]
`
      ).join(""),
    );
    stops.push(gateway.stop);
    const auth = { authorization: `Bearer ${BENCH_TOKEN}` };
    const meta = {
      "io.modelcontextprotocol/protocolVersion": MODERN,
      "io.modelcontextprotocol/clientCapabilities": {},
    };
    for (const backend of backends) {
      const gatewayUrl = `${gateway.url}/${backend.name}/mcp`;
      const bare = await Promise.all(
        BARE.map((how) =>
          startListening(
            ["--allow-all", `${ROOT}bench/backends/bare_proxy.ts`, "0", how, backend.process.url],
            "/mcp",
          )
        ),
      );
      stops.push(...bare.map((proxy) => proxy.stop));
      const kindsFor = (call: Record<string, unknown>): Kind[] => [
        {
          endpoint: { url: backend.process.url },
          session: true,
          body: () => request("tools/call", call),
          watch: { backend: backend.process.pid },
        },
        {
          endpoint: { url: `${nginx.url}/${backend.name}/mcp` },
          session: true,
          body: () => request("tools/call", call),
          watch: { proxy: nginx.workerPid, master: nginx.masterPid, backend: backend.process.pid },
        },
        {
          endpoint: { url: gatewayUrl, headers: auth },
          session: true,
          body: () => request("tools/call", call),
          watch: { proxy: gateway.pid, backend: backend.process.pid },
        },
        {
          endpoint: {
            url: gatewayUrl,
            headers: {
              ...auth,
              "mcp-protocol-version": MODERN,
              "mcp-method": "tools/call",
              "mcp-name": "echo",
            },
          },
          session: false,
          body: () => request("tools/call", { ...call, _meta: meta }),
          watch: { proxy: gateway.pid, backend: backend.process.pid },
        },
        ...bare.map((proxy) => ({
          endpoint: { url: proxy.url },
          session: true,
          body: () => request("tools/call", call),
          watch: { proxy: proxy.pid, backend: backend.process.pid },
        })),
      ];
      const cases = [
        { label: backend.label, call: SMALL_CALL, concurrencies: [1, 50], calls },
        // What tools often answer (a file, a query's rows): the body is most of the work.
        ...backend.streaming ? [] : [{
          label: `${backend.label}, 64 KiB each way`,
          call: LARGE_CALL,
          concurrencies: [10],
          calls: Math.ceil(calls / 2),
        }],
      ];
      for (const { label: caseLabel, call, concurrencies, calls: count } of cases) {
        const kinds = kindsFor(call);
        for (const concurrency of concurrencies) {
          const runs: LoadResult[][] = kinds.map(() => []);
          for (let round = 0; round < ROUNDS; round++) {
            for (const [i, kind] of kinds.entries()) {
              runs[i].push(
                await runLoad({
                  endpoint: kind.endpoint,
                  session: kind.session ? await openSession(kind.endpoint) : undefined,
                  body: kind.body,
                  calls: count,
                  concurrency,
                  watch: kind.watch,
                }),
              );
            }
          }
          const [direct, viaNginx, session, stateless, ...floors] = runs.map(medianOf);
          const nginxCpu = viaNginx.cpuPerCall.proxy + viaNginx.cpuPerCall.master;
          const scenario = "nginx proxy floor";
          const label = `${caseLabel}, c=${concurrency}`;
          results.add({
            scenario,
            case: `${label}, direct`,
            ...figures(direct),
            backendCpuUs: direct.cpuPerCall.backend,
          });
          results.add({
            scenario,
            case: `${label}, nginx (1 worker, keep-alive upstream)`,
            ...figures(viaNginx),
            proxyCpuUs: nginxCpu,
            backendCpuUs: viaNginx.cpuPerCall.backend,
            ratio: viaNginx.rate / direct.rate,
          });
          for (const [i, how] of BARE.entries()) {
            results.add({
              scenario,
              case: `${label}, ${BARE_LABELS[how]}`,
              ...figures(floors[i]),
              proxyCpuUs: floors[i].cpuPerCall.proxy,
              backendCpuUs: floors[i].cpuPerCall.backend,
              ratio: floors[i].rate / direct.rate,
              value: floors[i].cpuPerCall.proxy / nginxCpu,
              unit: "× nginx CPU",
            });
          }
          const gatewayCalls = [["2025 session", session], ["2026 stateless", stateless]] as const;
          for (const [how, result] of gatewayCalls) {
            const cpu = result.cpuPerCall.proxy;
            results.add({
              scenario,
              case: `${label}, gateway ${how} (bearer)`,
              ...figures(result),
              proxyCpuUs: cpu,
              backendCpuUs: result.cpuPerCall.backend,
              ratio: result.rate / direct.rate,
              value: cpu / nginxCpu,
              unit: "× nginx CPU",
              target: `≤ ${TARGET_VS_NGINX}× nginx CPU (${nginxCpu.toFixed(1)} µs)`,
              met: cpu <= TARGET_VS_NGINX * nginxCpu,
            });
          }
        }
      }
    }
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}

function figures(result: LoadResult) {
  return { rate: result.rate, p50: result.p50, p99: result.p99 };
}
