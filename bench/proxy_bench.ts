/**
 * `deno task bench`: tools/call through the gateway vs directly to the same backend, for a
 * Streamable HTTP backend (the SDK fixture) and a stdio backend (the minimal server), at
 * concurrency 1 and 50. Prints calls/s, p50, p99, the gateway/direct throughput ratio and the
 * gateway process's CPU time per call (from /proc). Everything runs on 127.0.0.1.
 */
import { mcpHeaders, openSession, post } from "../tests/fixtures/raw.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const CALLS = Number(Deno.env.get("BENCH_CALLS") ?? 2000);
const TICKS_PER_SECOND = 100;
const AGGREGATE_MEMBERS = 10;
const AGGREGATE_TOOLS = 50;

async function startProcess(args: string[], ready: RegExp, env: Record<string, string> = {}) {
  const child = new Deno.Command("deno", { args, stdout: "piped", stderr: "piped", env }).spawn();
  const decoder = new TextDecoder();
  let seen = "";
  const readers = [child.stdout, child.stderr].map(async (stream) => {
    for await (const chunk of stream) {
      seen += decoder.decode(chunk);
    }
  });
  for (let i = 0; i < 200 && !ready.test(seen); i++) await new Promise((r) => setTimeout(r, 50));
  if (!ready.test(seen)) throw new Error(`did not start: ${args.join(" ")}\n${seen}`);
  return { child, seen: () => seen, readers };
}

function cpuTicks(pid: number): number {
  const fields = Deno.readTextFileSync(`/proc/${pid}/stat`).replace(/^.*\) /, "").split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

async function load(call: () => Promise<void>, concurrency: number) {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next++ < CALLS) {
      const t0 = performance.now();
      await call();
      latencies.push(performance.now() - t0);
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { rate: CALLS / seconds, p50: at(0.5), p99: at(0.99) };
}

function callBody(id: number) {
  return {
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "echo", arguments: { n: id } },
  };
}

const backend = await startProcess(
  ["run", "-A", `${ROOT}tests/fixtures/fixture_server.ts`, "http", "0"],
  /listening on \d+/,
);
const backendUrl = `http://127.0.0.1:${/listening on (\d+)/.exec(backend.seen())![1]}/mcp`;
const dir = await Deno.makeTempDir();
const port = 18000 + Math.floor(Math.random() * 1000);
await Deno.writeTextFile(
  `${dir}/bench.yaml`,
  `listen: 127.0.0.1:${port}
storage: ":memory:"
logLevel: warn
limits: { sessionsPerUser: 100 }
# One load generator stands for many people: limits high enough never to stop it, still counted.
rateLimits: { mcpPerUser: 1000000/s, mcpPerClient: 1000000/s }
servers:
  http:
    transport: streamable-http
    url: ${backendUrl}
    public: true
  stdio:
    transport: stdio
    command: deno
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts"]
    public: true
${
    Array.from({ length: AGGREGATE_MEMBERS }, (_, i) =>
      `  m${i}:
    transport: stdio
    command: deno
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts", "${AGGREGATE_TOOLS}"]
    public: true
`).join("")
  }  agg:
    transport: aggregate
    servers: [${Array.from({ length: AGGREGATE_MEMBERS }, (_, i) => `m${i}`).join(", ")}]
    cacheTtl: 10m
    public: true
  aggnocache:
    transport: aggregate
    servers: [${Array.from({ length: AGGREGATE_MEMBERS }, (_, i) => `m${i}`).join(", ")}]
    cacheTtl: 1ms
    public: true
`,
);
const gateway = await startProcess(
  ["run", "-A", `${ROOT}main.ts`, "serve", "--config", `${dir}/bench.yaml`],
  /no secret configured/,
);
const gatewayUrl = `http://127.0.0.1:${port}`;
for (let i = 0; i < 100; i++) {
  const ok = await fetch(`${gatewayUrl}/health`).then(
    (r) => r.body?.cancel().then(() => r.ok),
    () => false,
  );
  if (ok) break;
  await new Promise((r) => setTimeout(r, 50));
}

// The fixture's `echo_environment` is heavy; the bench calls a cheap tool on each backend.
const rows: string[][] = [];
let id = 10;
for (
  const [label, directUrl, gatewayPath, tool] of [
    ["streamable-http", backendUrl, "/http/mcp", "test_simple_text"],
    ["stdio", undefined, "/stdio/mcp", "echo"],
  ] as const
) {
  for (const concurrency of [1, 50]) {
    const headers = mcpHeaders();
    const viaGateway = `${gatewayUrl}${gatewayPath}`;
    const gwSession = await openSession(viaGateway);
    const callVia = (url: string, session: string) => async () => {
      const body = { ...callBody(++id), params: { name: tool, arguments: {} } };
      const r = await post(url, body, { ...headers, "mcp-session-id": session });
      if (r.status !== 200) throw new Error(`call failed: ${r.status} ${r.text}`);
    };
    let direct: { rate: number; p50: number; p99: number } | undefined;
    if (directUrl) {
      const directSession = await openSession(directUrl);
      direct = await load(callVia(directUrl, directSession), concurrency);
    }
    const before = cpuTicks(gateway.child.pid);
    const through = await load(callVia(viaGateway, gwSession), concurrency);
    const cpuUs = (cpuTicks(gateway.child.pid) - before) / TICKS_PER_SECOND / CALLS * 1e6;
    const f = (n: number) => n.toFixed(2);
    if (direct) {
      rows.push([
        label,
        String(concurrency),
        "direct",
        f(direct.rate),
        f(direct.p50),
        f(direct.p99),
        "",
        "",
      ]);
    }
    rows.push([
      label,
      String(concurrency),
      "gateway",
      f(through.rate),
      f(through.p50),
      f(through.p99),
      direct ? f(through.rate / direct.rate) : "n/a",
      cpuUs.toFixed(0),
    ]);
  }
}
// Aggregate: 10 stdio members with 50 tools each, lists cached (10 min) and uncached (1 ms).
for (
  const [label, path, method, params] of [
    ["aggregate cached", "/agg/mcp", "tools/list", {}],
    ["aggregate uncached", "/aggnocache/mcp", "tools/list", {}],
    ["aggregate cached", "/agg/mcp", "tools/call", { name: "m3.echo", arguments: {} }],
  ] as const
) {
  for (const concurrency of [1, 50]) {
    const url = `${gatewayUrl}${path}`;
    const session = await openSession(url);
    const headers = { ...mcpHeaders(), "mcp-session-id": session };
    const warm = await post(url, { jsonrpc: "2.0", id: ++id, method: "tools/list" }, headers);
    const count = (warm.json as { result?: { tools?: unknown[] } })?.result?.tools?.length;
    if (count !== AGGREGATE_MEMBERS * (AGGREGATE_TOOLS + 2)) {
      throw new Error(`the aggregate listed ${count} tools: ${warm.text.slice(0, 300)}`);
    }
    const before = cpuTicks(gateway.child.pid);
    const result = await load(async () => {
      const r = await post(url, { jsonrpc: "2.0", id: ++id, method, params }, headers);
      if (r.status !== 200) throw new Error(`${method} failed: ${r.status} ${r.text}`);
    }, concurrency);
    const cpuUs = (cpuTicks(gateway.child.pid) - before) / TICKS_PER_SECOND / CALLS * 1e6;
    const f = (n: number) => n.toFixed(2);
    rows.push([
      `${label} ${method}`,
      String(concurrency),
      "gateway",
      f(result.rate),
      f(result.p50),
      f(result.p99),
      "n/a",
      cpuUs.toFixed(0),
    ]);
  }
}

console.log(`calls per scenario: ${CALLS}`);
console.log(
  ["backend", "conc", "path", "calls/s", "p50 ms", "p99 ms", "gw/direct", "gw CPU µs/call"].join(
    "\t",
  ),
);
for (const row of rows) console.log(row.join("\t"));

gateway.child.kill("SIGTERM");
backend.child.kill("SIGTERM");
await Promise.all([gateway.child.status, backend.child.status]);
await Deno.remove(dir, { recursive: true });
