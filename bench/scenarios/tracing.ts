/**
 * Scenario 10: what tracing costs (docs/observability.md). The same `tools/call` load at c=50
 * through two gateways side by side, one as shipped (tracing off) and one with
 * `OTEL_DENO=true` exporting every span (OTLP/HTTP, protobuf, Deno's defaults) to a sink that
 * accepts and drops them; runs interleaved, medians reported. The gateway's CPU per call
 * includes Deno's own server span, the gateway's two spans and the export.
 */
import { BENCH_TOKEN, ROOT, startGateway, stdioServer } from "../lib/gateway.ts";
import { type LoadResult, medianOf, openSession, request, runLoad } from "../lib/load.ts";
import { startListening } from "../lib/processes.ts";
import type { Results } from "../lib/report.ts";
import { traceRequest } from "../../src/mcp/sessions/request_trace.ts";
import { userId } from "../../src/core/ids.ts";
import { nameHttpSpan, TRACING, withTraceHeaders } from "../../src/observability/tracing.ts";

const ROUNDS = 3;
const CONCURRENCY = 50;
const AUTH = `    serviceAuths: [{ type: bearer, tokens: ["${BENCH_TOKEN}"] }]\n`;

/** An OTLP endpoint that takes whatever it is sent and answers 200, counting exports. */
function otlpSink() {
  let exports = 0;
  const ready = Promise.withResolvers<number>();
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: ({ port }) => ready.resolve(port),
  }, async (request) => {
    await request.arrayBuffer();
    if (new URL(request.url).pathname === "/v1/traces") exports++;
    return new Response(null, { status: 200 });
  });
  return {
    port: ready.promise,
    exports: () => exports,
    close: () => server.shutdown(),
  };
}

/**
 * The hooks a call passes with tracing off (this process has no OTEL_DENO), in process: what
 * "off costs nothing" comes to.
 */
function offPathCost(results: Results): void {
  if (TRACING) return;
  const rounds = 1_000_000;
  const call = { jsonrpc: "2.0" as const, id: 1, method: "tools/call", params: { name: "echo" } };
  const subject = { session: "s", server: "http", principal: { id: userId("token:0") } };
  const init: RequestInit = { method: "POST", headers: { "content-type": "application/json" } };
  let kept = 0;
  const started = performance.now();
  for (let i = 0; i < rounds; i++) {
    if (traceRequest(call, subject) === undefined) kept++;
    if (withTraceHeaders(init) === init) kept++;
    nameHttpSpan("POST", "/{server}/mcp");
  }
  const ns = (performance.now() - started) * 1e6 / rounds;
  if (kept !== 2 * rounds) throw new Error("a tracing hook did something with tracing off");
  results.add({
    scenario: "10 tracing, tools/call",
    case: "the per-call hooks with tracing off, in process",
    value: ns,
    unit: "ns/call",
  });
}

export async function tracingCost(results: Results, calls: number): Promise<void> {
  offPathCost(results);
  const backend = await startListening(
    ["--allow-net", `${ROOT}bench/backends/minimal_http.ts`, "0", "json"],
    "/mcp",
  );
  const sink = otlpSink();
  const servers = `  http:
    transport: streamable-http
    url: ${backend.url}
${AUTH}${stdioServer("stdio", `${ROOT}tests/fixtures/minimal_server.ts`, [], AUTH)}`;
  const off = await startGateway(servers);
  const on = await startGateway(servers, {
    env: {
      OTEL_DENO: "true",
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await sink.port}`,
      OTEL_SERVICE_NAME: "gatehouse-bench",
    },
  });
  try {
    for (const server of ["http", "stdio"]) {
      const body = () => request("tools/call", { name: "echo", arguments: { n: 1 } });
      const run = async (gateway: typeof off) => {
        const endpoint = {
          url: `${gateway.url}/${server}/mcp`,
          headers: { authorization: `Bearer ${BENCH_TOKEN}` },
        };
        return await runLoad({
          endpoint,
          session: await openSession(endpoint),
          body,
          calls: Math.ceil(calls / ROUNDS),
          concurrency: CONCURRENCY,
          watch: { gateway: gateway.pid },
        });
      };
      const rounds: LoadResult[][] = [[], []];
      for (let round = 0; round < ROUNDS; round++) {
        rounds[0].push(await run(off));
        rounds[1].push(await run(on));
      }
      const [quiet, traced] = rounds.map(medianOf);
      const label = server === "http" ? "HTTP backend" : "stdio backend";
      for (const [how, result] of [["tracing off", quiet], ["tracing on", traced]] as const) {
        results.add({
          scenario: "10 tracing, tools/call",
          case: `${label}, c=${CONCURRENCY}, ${how}`,
          rate: result.rate,
          p50: result.p50,
          p99: result.p99,
          proxyCpuUs: result.cpuPerCall.gateway,
          ratio: result.rate / quiet.rate,
        });
      }
    }
    // A gateway that exported nothing measured nothing: say so rather than print a figure.
    if (sink.exports() === 0) throw new Error("the traced gateway exported no spans to the sink");
  } finally {
    await Promise.all([off.stop(), on.stop(), backend.stop()]);
    await sink.close();
  }
}
