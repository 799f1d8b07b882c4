/**
 * The fuzzer's CI slice: 10,000 seeded hostile cases (MCP, OAuth, pages, config files) and 100
 * raw TCP garbage connections against a real gateway; no crash, no hang, no unexplained 5xx,
 * and the gateway still serves afterwards. `deno task fuzz` runs 100,000 with a random seed;
 * FUZZ_SEED replays one.
 */
import assert from "node:assert/strict";
import { rawGarbage, runFuzz, startFuzzTarget } from "./fuzz/harness.ts";
import { INIT, mcpHeaders, post } from "./fixtures/raw.ts";

Deno.test("fuzz: 10,000 hostile cases and raw TCP garbage leave the gateway serving", async () => {
  const seed = Number(Deno.env.get("FUZZ_SEED") ?? 20261122);
  const fuzz = await startFuzzTarget();
  try {
    const report = await runFuzz(fuzz, seed, 10_000);
    await rawGarbage(Number(new URL(fuzz.target.base).port), seed, 100);
    console.log(`fuzz seed ${seed}: ${JSON.stringify(report.outcomes)}`);
    assert.deepEqual(report.failures, []);
    // The cases must reach past the first checks (sessions served, every kind of refusal),
    // or the fuzzer tests nothing.
    const served = (report.outcomes["200"] ?? 0) + (report.outcomes["202"] ?? 0);
    assert.ok(served >= 300, `only ${served} cases were served`);
    const kinds = Object.keys(report.outcomes);
    assert.ok(kinds.length >= 25, `only ${kinds.length} kinds of outcome: ${kinds.join(", ")}`);
    for (
      const expected of ["201", "302", "404 rpc -32001", "413 payload_too_large", "config refused"]
    ) {
      assert.ok(report.outcomes[expected] > 0, `no "${expected}" among the outcomes`);
    }
    const health = await fetch(`${fuzz.target.base}/health`);
    assert.equal(health.status, 200);
    await health.body?.cancel();
    const init = await post(`${fuzz.target.base}/open/mcp`, INIT, mcpHeaders());
    assert.equal(init.status, 200);
  } finally {
    await fuzz.close();
  }
});
