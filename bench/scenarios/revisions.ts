/**
 * Scenario 8: the same `tools/call` through the gateway as a 2025-11-25 session call and as a
 * 2026-07-28 stateless call (its `_meta` and headers, no session), to a 2025 backend (the
 * bench's minimal HTTP server answering JSON), at concurrency 1 and 50. The stateless call
 * goes through the person's link and both translations; the target is no more gateway CPU
 * than the session call.
 */
import { BENCH_TOKEN, startGateway, startMinimalBackend } from "../lib/gateway.ts";
import { type LoadResult, medianOf, openSession, request, runLoad } from "../lib/load.ts";
import type { Results } from "../lib/report.ts";

const ROUNDS = 3;
const MODERN = "2026-07-28";

export async function revisions(results: Results, calls: number): Promise<void> {
  const backend = await startMinimalBackend();
  const gateway = await startGateway(`  min:
    transport: streamable-http
    url: ${backend.url}
    serviceAuths: [{ type: bearer, tokens: ["${BENCH_TOKEN}"] }]
`);
  try {
    const url = `${gateway.url}/min/mcp`;
    const auth = { authorization: `Bearer ${BENCH_TOKEN}` };
    const session = { url, headers: auth };
    const stateless = {
      url,
      headers: {
        ...auth,
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": "echo",
      },
    };
    const meta = {
      "io.modelcontextprotocol/protocolVersion": MODERN,
      "io.modelcontextprotocol/clientCapabilities": {},
    };
    for (const concurrency of [1, 50]) {
      const rounds: LoadResult[][] = [[], []];
      for (let round = 0; round < ROUNDS; round++) {
        rounds[0].push(
          await runLoad({
            endpoint: session,
            session: await openSession(session),
            body: () => request("tools/call", { name: "echo", arguments: { n: 1 } }),
            calls: Math.ceil(calls / ROUNDS),
            concurrency,
            watch: { gateway: gateway.pid, backend: backend.pid },
          }),
        );
        rounds[1].push(
          await runLoad({
            endpoint: stateless,
            body: () => request("tools/call", { name: "echo", arguments: { n: 1 }, _meta: meta }),
            calls: Math.ceil(calls / ROUNDS),
            concurrency,
            watch: { gateway: gateway.pid, backend: backend.pid },
          }),
        );
      }
      const [sessionCall, statelessCall] = rounds.map(medianOf);
      const scenario = "8 revisions";
      results.add({
        scenario,
        case: `2025-11-25 session call, c=${concurrency}`,
        rate: sessionCall.rate,
        p50: sessionCall.p50,
        p99: sessionCall.p99,
        proxyCpuUs: sessionCall.cpuPerCall.gateway,
        backendCpuUs: sessionCall.cpuPerCall.backend,
      });
      const cpu = statelessCall.cpuPerCall.gateway;
      results.add({
        scenario,
        case: `2026-07-28 stateless call, c=${concurrency}`,
        rate: statelessCall.rate,
        p50: statelessCall.p50,
        p99: statelessCall.p99,
        proxyCpuUs: cpu,
        backendCpuUs: statelessCall.cpuPerCall.backend,
        target: `gateway CPU ≤ the session call's (${
          sessionCall.cpuPerCall.gateway.toFixed(0)
        } µs)`,
        met: cpu <= sessionCall.cpuPerCall.gateway,
      });
    }
  } finally {
    await gateway.stop();
    await backend.stop();
  }
}
