/**
 * Scenario 3: a 10-member aggregate (stdio minimal servers, 50 extra tools each, so 520 tools),
 * `tools/list` and `tools/call`, with the discovery cache on (10 min) and off (1 ms).
 */
import { ROOT, startGateway, stdioServer } from "../lib/gateway.ts";
import { expectResult, openSession, request, runLoad } from "../lib/load.ts";
import type { Results } from "../lib/report.ts";
import type { Reply } from "../lib/http_client.ts";

const MEMBERS = 10;
const TOOLS = 50;
const TARGET_CACHED_LIST_P50 = 2;

export async function aggregate(results: Results, calls: number): Promise<void> {
  const names = Array.from({ length: MEMBERS }, (_, i) => `m${i}`);
  const members = names.map((name) =>
    stdioServer(
      name,
      `${ROOT}tests/fixtures/minimal_server.ts`,
      [String(TOOLS)],
      "    public: true\n",
    )
  ).join("");
  const gateway = await startGateway(`${members}  cached:
    transport: aggregate
    servers: [${names.join(", ")}]
    cacheTtl: 10m
    public: true
  uncached:
    transport: aggregate
    servers: [${names.join(", ")}]
    cacheTtl: 1ms
    public: true
`);
  const expected = MEMBERS * (TOOLS + 2);
  const listed = (reply: Reply) => {
    const tools = (expectResult(reply, "tools/list").tools as unknown[]).length;
    if (tools !== expected) throw new Error(`the aggregate listed ${tools} tools, not ${expected}`);
  };
  try {
    for (
      const [label, server, method, params] of [
        ["tools/list, cached", "cached", "tools/list", {}],
        ["tools/list, uncached", "uncached", "tools/list", {}],
        ["tools/call", "cached", "tools/call", { name: "m3.echo", arguments: { n: 1 } }],
      ] as const
    ) {
      for (const concurrency of [1, 50]) {
        const endpoint = { url: `${gateway.url}/${server}/mcp` };
        // Lists are large; fewer of them keep the run bounded.
        const count = method === "tools/list" ? Math.max(200, Math.floor(calls / 5)) : calls;
        const result = await runLoad({
          endpoint,
          session: await openSession(endpoint),
          body: () => request(method, params),
          calls: count,
          concurrency,
          watch: { gateway: gateway.pid },
          check: method === "tools/list" ? listed : undefined,
        });
        const judged = server === "cached" && method === "tools/list" && concurrency === 1;
        results.add({
          scenario: "3 aggregate (10 × 52 tools)",
          case: `${label}, c=${concurrency}`,
          rate: result.rate,
          p50: result.p50,
          p99: result.p99,
          proxyCpuUs: result.cpuPerCall.gateway,
          ...(judged && {
            target: `p50 ≤ ${TARGET_CACHED_LIST_P50} ms`,
            met: result.p50 <= TARGET_CACHED_LIST_P50,
          }),
        });
      }
    }
  } finally {
    await gateway.stop();
  }
}
