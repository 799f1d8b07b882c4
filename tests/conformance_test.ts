/**
 * The official MCP conformance suite, run under Deno against `/{server}/mcp` for each backend
 * transport. Through the gateway, every scenario that passes against the fixture server
 * directly must pass too; DNS-rebinding protection (which the fixture lacks) must pass
 * through the gateway. The per-scenario table is printed in the test output.
 */
import assert from "node:assert/strict";
import { startHttpFixture, startSseFixture } from "./fixtures/fixture_server.ts";
import { FIXTURE_STDIO, startGateway } from "./fixtures/gateway.ts";

const SUITE = "npm:@modelcontextprotocol/conformance@0.1.16";

type Results = Map<string, { passed: number; failed: number }>;

async function runSuite(url: string): Promise<Results> {
  const cwd = await Deno.makeTempDir();
  try {
    const output = await new Deno.Command("deno", {
      args: ["run", "-A", SUITE, "server", "--url", url],
      cwd,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(output.stdout);
    const results: Results = new Map();
    for (const match of text.matchAll(/^[✓✗] (\S+): (\d+) passed, (\d+) failed/gm)) {
      results.set(match[1], { passed: Number(match[2]), failed: Number(match[3]) });
    }
    assert.ok(results.size > 20, `the suite ran (${url}):\n${text.slice(-2000)}`);
    return results;
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
}

Deno.test("conformance suite passes through the gateway for every backend transport", async () => {
  const http = await startHttpFixture();
  const sse = await startSseFixture();
  const gw = await startGateway(`
baseUrl: http://127.0.0.1:{{PORT}}
limits: { sessionsPerUser: 500 }
servers:
  stdio:
    transport: stdio
    ${FIXTURE_STDIO}
    public: true
  http:
    transport: streamable-http
    url: ${http.url}
    public: true
  sse:
    transport: sse
    url: ${sse.url}
    public: true
`);
  try {
    const direct = await runSuite(http.url);
    const through: Record<string, Results> = {};
    for (const backend of ["stdio", "http", "sse"]) {
      through[backend] = await runSuite(`${gw.url}/${backend}/mcp`);
    }
    const mark = (r?: { passed: number; failed: number }) =>
      r ? (r.failed ? `fails ${r.passed}/${r.passed + r.failed}` : `ok ${r.passed}`) : "-";
    const row = (...cells: string[]) =>
      cells.map((cell, i) => cell.padEnd([34, 10, 10, 10, 0][i])).join(" ");
    const table = [
      row("scenario", "direct", "stdio", "http", "sse"),
      ...[...direct.keys()].map((scenario) =>
        row(
          scenario,
          mark(direct.get(scenario)),
          mark(through.stdio.get(scenario)),
          mark(through.http.get(scenario)),
          mark(through.sse.get(scenario)),
        )
      ),
    ].join("\n");
    // A green run stays quiet: scenarios that fail directly fail through the gateway by design.
    if (Deno.env.get("GATEHOUSE_CONFORMANCE_TABLES")) console.log(table);
    for (const [scenario, result] of direct) {
      const expectPass = result.failed === 0 || scenario === "dns-rebinding-protection";
      if (!expectPass) continue;
      for (const backend of ["stdio", "http", "sse"]) {
        const got = through[backend].get(scenario);
        assert.ok(
          got && got.failed === 0,
          `${scenario} via ${backend}: ${JSON.stringify(got)}\n${table}`,
        );
      }
    }
  } finally {
    await gw.close();
    await http.close();
    await sse.close();
  }
});
