/**
 * Scenario 1: `tools/call` to Streamable HTTP backends, directly and through the gateway with
 * a static bearer token and with an OAuth JWT, at concurrency 1 and 50. Backends: the bench's
 * minimal server answering JSON, the same answering SSE, and the SDK-based fixture server.
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
import { startListening } from "../lib/processes.ts";
import type { Results } from "../lib/report.ts";

const TARGET_CPU_US = 50;
const TARGET_RATIO = 0.6;
const TARGET_ADDED_P50 = 0.3;
const TARGET_ADDED_P99 = 1;
const TARGET_JWT_SLOWDOWN = 0.05;
/** Direct, bearer and JWT runs alternate this many times; each figure is their median. */
const ROUNDS = 3;

interface Backend {
  name: string;
  label: string;
  args: string[];
  tool: string;
}

const BACKENDS: Backend[] = [
  {
    name: "minjson",
    label: "minimal, JSON",
    args: [`${ROOT}bench/backends/minimal_http.ts`, "0", "json"],
    tool: "echo",
  },
  {
    name: "minsse",
    label: "minimal, SSE",
    args: [`${ROOT}bench/backends/minimal_http.ts`, "0", "sse"],
    tool: "echo",
  },
  {
    name: "sdk",
    label: "SDK fixture",
    args: [`${ROOT}tests/fixtures/fixture_server.ts`, "http", "0"],
    tool: "test_simple_text",
  },
];

export async function httpCalls(results: Results, calls: number): Promise<void> {
  const backends = await Promise.all(
    BACKENDS.map(async (b) => ({
      ...b,
      process: await startListening(
        ["--allow-net", "--allow-env", "--allow-read", ...b.args],
        "/mcp",
      ),
    })),
  );
  const urls = new Map(backends.map((b) => [b.name, b.process.url]));
  const gateway = await startGateway(
    backends.map((b) =>
      `  ${b.name}:
    transport: streamable-http
    url: ${urls.get(b.name)}
    serviceAuths: [{ type: bearer, tokens: ["${BENCH_TOKEN}"] }]
`
    ).join(""),
    { oauth: true },
  );
  try {
    for (const backend of backends) {
      const jwt = await gateway.accessToken(backend.name);
      const body = () => request("tools/call", { name: backend.tool, arguments: { n: 1 } });
      for (const concurrency of [1, 50]) {
        const scenario = "1 HTTP tools/call";
        const label = `${backend.label}, c=${concurrency}`;
        const run = async (endpoint: Endpoint) =>
          await runLoad({
            endpoint,
            session: await openSession(endpoint),
            body,
            calls: Math.ceil(calls / ROUNDS),
            concurrency,
            watch: { gateway: gateway.pid, backend: backend.process.pid },
          });
        const endpoints = [
          { url: urls.get(backend.name)! },
          {
            url: `${gateway.url}/${backend.name}/mcp`,
            headers: { authorization: `Bearer ${BENCH_TOKEN}` },
          },
          {
            url: `${gateway.url}/${backend.name}/mcp`,
            headers: { authorization: `Bearer ${jwt}` },
          },
        ];
        const rounds: LoadResult[][] = [[], [], []];
        for (let round = 0; round < ROUNDS; round++) {
          for (const [i, endpoint] of endpoints.entries()) rounds[i].push(await run(endpoint));
        }
        const [direct, bearer, oauth] = rounds.map(medianOf);
        results.add({
          scenario,
          case: `${label}, direct`,
          ...figures(direct),
          backendCpuUs: direct.cpuPerCall.backend,
        });
        for (const [how, result] of [["bearer", bearer], ["OAuth JWT", oauth]] as const) {
          const cpu = result.cpuPerCall.gateway;
          const ratio = result.rate / direct.rate;
          const added = { p50: result.p50 - direct.p50, p99: result.p99 - direct.p99 };
          const targets = [`CPU ≤ ${TARGET_CPU_US} µs`];
          let met = cpu <= TARGET_CPU_US;
          if (concurrency === 50 && backend.name === "minjson") {
            targets.push(`ratio ≥ ${TARGET_RATIO}`);
            met &&= ratio >= TARGET_RATIO;
          }
          if (concurrency === 1) {
            targets.push(
              `added p50 ≤ ${TARGET_ADDED_P50} ms (${added.p50.toFixed(2)}), ` +
                `p99 ≤ ${TARGET_ADDED_P99} ms (${added.p99.toFixed(2)})`,
            );
            met &&= added.p50 <= TARGET_ADDED_P50 && added.p99 <= TARGET_ADDED_P99;
          }
          if (how === "OAuth JWT") {
            const slower = 1 - result.rate / bearer.rate;
            targets.push(`within 5% of bearer (${(slower * 100).toFixed(1)}% slower)`);
            met &&= slower <= TARGET_JWT_SLOWDOWN;
          }
          results.add({
            scenario,
            case: `${label}, gateway ${how}`,
            ...figures(result),
            proxyCpuUs: cpu,
            backendCpuUs: result.cpuPerCall.backend,
            ratio,
            target: targets.join("; "),
            met,
          });
        }
      }
    }
  } finally {
    await gateway.stop();
    await Promise.all(backends.map((b) => b.process.stop()));
  }
}

function figures(result: LoadResult) {
  return { rate: result.rate, p50: result.p50, p99: result.p99 };
}
