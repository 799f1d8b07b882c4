/**
 * The TCP front and `Deno.serve` agree on every request the front lets through: generated heads
 * go both ways (tests/fuzz/heads.ts), and any difference in how the server split, read or
 * addressed them fails the test. `deno task fuzz` runs many more cases with a random seed;
 * HEAD_FUZZ_SEED replays one.
 */
import assert from "node:assert/strict";
import { runHeadFuzz } from "./fuzz/heads.ts";

Deno.test("the TCP front lets through only requests that Deno.serve splits and reads as it does", async () => {
  const seed = Number(Deno.env.get("HEAD_FUZZ_SEED") ?? 20261128);
  const report = await runHeadFuzz(seed, 1000);
  console.log(`head fuzz seed ${seed}: ${report.whole} let through whole, ${report.refused} not`);
  assert.deepEqual(report.failures, []);
  // Both kinds must be many, or the generator tests nothing.
  assert.ok(report.whole >= 100, `only ${report.whole} cases went through whole`);
  assert.ok(report.refused >= 300, `only ${report.refused} cases were stopped`);
});
