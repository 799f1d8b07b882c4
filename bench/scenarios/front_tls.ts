/**
 * Scenario 12 (issue 32): what the TCP front and TLS cost per call through the whole gateway,
 * the same backend (the bench's minimal HTTP server, JSON answers) in the same run, at c=1 and
 * c=50: the front on (the default), `connections.front: false` (Deno.serve owns the port), and
 * the front terminating TLS (`tls.cert`/`tls.key`, kept-alive connections: the handshake is paid
 * once per connection, outside the measured calls). Runs alternate three times; medians taken.
 */
import { testCa } from "../../tests/fixtures/certificates.ts";
import { BENCH_TOKEN, ROOT, startGateway } from "../lib/gateway.ts";
import { HttpConnection } from "../lib/http_client.ts";
import { type LoadResult, medianOf, openSession, request, runLoad } from "../lib/load.ts";
import { startListening } from "../lib/processes.ts";
import type { Results } from "../lib/report.ts";

const ROUNDS = 3;
const CALL = { name: "echo", arguments: { n: 1 } };

export async function frontAndTls(results: Results, calls: number): Promise<void> {
  const scenario = "12 front and TLS";
  const ca = await testCa("bench CA");
  const leaf = await ca.issue("bench gateway");
  await Deno.writeTextFile(`${ca.dir}/gw.pem`, leaf.cert);
  await Deno.writeTextFile(`${ca.dir}/gw.key`, leaf.key);
  HttpConnection.trusted = [ca.cert];
  const backend = await startListening(
    ["--allow-net", `${ROOT}bench/backends/minimal_http.ts`, "0", "json"],
    "/mcp",
  );
  const stops: (() => Promise<void>)[] = [backend.stop];
  try {
    const servers = `  json:
    transport: streamable-http
    url: ${backend.url}
    serviceAuths: [{ type: bearer, tokens: ["${BENCH_TOKEN}"] }]
`;
    const modes = [
      { label: "front on (default)", gateway: await startGateway(servers) },
      {
        label: "connections.front: false",
        gateway: await startGateway(servers, {
          extra: "trustedProxies: [127.0.0.1]\nconnections: { front: false }\n",
        }),
      },
      {
        label: "front on, TLS (tls.cert)",
        gateway: await startGateway(servers, {
          extra: `tls: { cert: ${ca.dir}/gw.pem, key: ${ca.dir}/gw.key }\n`,
          https: { caCert: ca.cert },
        }),
      },
    ];
    stops.push(...modes.map((mode) => mode.gateway.stop));
    const auth = { authorization: `Bearer ${BENCH_TOKEN}` };
    for (const concurrency of [1, 50]) {
      const runs: LoadResult[][] = modes.map(() => []);
      for (let round = 0; round < ROUNDS; round++) {
        for (const [i, mode] of modes.entries()) {
          const endpoint = { url: `${mode.gateway.url}/json/mcp`, headers: auth };
          runs[i].push(
            await runLoad({
              endpoint,
              session: await openSession(endpoint),
              body: () => request("tools/call", CALL),
              calls,
              concurrency,
              watch: { gateway: mode.gateway.pid, backend: backend.pid },
            }),
          );
        }
      }
      const medians = runs.map(medianOf);
      for (const [i, mode] of modes.entries()) {
        results.add({
          scenario,
          case: `tools/call, ${mode.label}, c=${concurrency}`,
          rate: medians[i].rate,
          p50: medians[i].p50,
          p99: medians[i].p99,
          proxyCpuUs: medians[i].cpuPerCall.gateway,
          backendCpuUs: medians[i].cpuPerCall.backend,
          ratio: medians[i].rate / medians[0].rate,
        });
      }
      results.add({
        scenario,
        case: `the front's CPU per call (on minus off), c=${concurrency}`,
        value: medians[0].cpuPerCall.gateway - medians[1].cpuPerCall.gateway,
        unit: "µs",
      });
      results.add({
        scenario,
        case: `TLS's CPU per call (TLS minus plain, both behind the front), c=${concurrency}`,
        value: medians[2].cpuPerCall.gateway - medians[0].cpuPerCall.gateway,
        unit: "µs",
      });
    }
  } finally {
    HttpConnection.trusted = [];
    for (const stop of stops.reverse()) await stop();
    await Deno.remove(ca.dir, { recursive: true });
  }
}
