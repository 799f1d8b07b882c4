/**
 * Scenario 7: what the TCP front (connection limits and timeouts before `Deno.serve`, see
 * src/net/tcp_front.ts) costs per request: the same tiny handler served directly and behind
 * the front, c=1 and c=50, runs alternated and medians taken. And the memory of an idle kept
 * connection each way.
 */
import { HttpConnection } from "../lib/http_client.ts";
import { medianOf, runLoad } from "../lib/load.ts";
import { rssBytes, sleep, startListening } from "../lib/processes.ts";
import type { Results } from "../lib/report.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const IDLE_CONNECTIONS = 2000;
const KB = 1024;

export async function front(results: Results, calls: number): Promise<void> {
  const scenario = "7 front";
  const servers = {
    direct: await startListening(
      ["--allow-net", `${ROOT}bench/backends/front_echo.ts`, "direct"],
      "/mcp",
    ),
    front: await startListening(
      [
        "--allow-net",
        "--allow-read",
        "--allow-write",
        `${ROOT}bench/backends/front_echo.ts`,
        "front",
      ],
      "/mcp",
    ),
  };
  try {
    for (const concurrency of [1, 50]) {
      const measured: Record<string, Awaited<ReturnType<typeof runLoad>>[]> = {
        direct: [],
        front: [],
      };
      for (let round = 0; round < 3; round++) {
        for (const name of ["direct", "front"] as const) {
          const server = servers[name];
          measured[name].push(
            await runLoad({
              endpoint: { url: server.url },
              body: () => '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}',
              calls,
              concurrency,
              watch: { server: server.pid },
            }),
          );
        }
      }
      const direct = medianOf(measured.direct);
      const behind = medianOf(measured.front);
      for (
        const [name, result] of [["direct Deno.serve", direct], [
          "behind the front",
          behind,
        ]] as const
      ) {
        results.add({
          scenario,
          case: `tiny handler, ${name}, c=${concurrency}`,
          rate: result.rate,
          p50: result.p50,
          p99: result.p99,
          proxyCpuUs: result.cpuPerCall.server,
          ratio: result.rate / direct.rate,
        });
      }
      results.add({
        scenario,
        case: `front's CPU per request, c=${concurrency}`,
        value: behind.cpuPerCall.server - direct.cpuPerCall.server,
        unit: "µs",
      });
    }
    for (const name of ["direct", "front"] as const) {
      const server = servers[name];
      await sleep(1000);
      const before = rssBytes(server.pid);
      const held: HttpConnection[] = [];
      for (let i = 0; i < IDLE_CONNECTIONS; i += 100) {
        held.push(
          ...await Promise.all(Array.from({ length: 100 }, async () => {
            const conn = await HttpConnection.open(server.url, 4 * KB);
            await conn.request("POST", "/mcp", {}, "{}");
            return conn;
          })),
        );
      }
      await sleep(2000);
      results.add({
        scenario,
        case: `memory per idle kept-alive connection, ${
          name === "direct" ? "direct" : "behind the front"
        }`,
        value: (rssBytes(server.pid) - before) / IDLE_CONNECTIONS / KB,
        unit: "KiB",
      });
      for (const conn of held) conn.close();
    }
  } finally {
    for (const server of Object.values(servers)) await server.stop();
  }
}
