/**
 * `deno task fuzz [--cases N] [--head-cases N] [--seed S]`: the long fuzz run (100,000 cases by
 * default) against a real gateway, then the TCP front against `Deno.serve` on generated request
 * heads (20,000 by default, heads.ts); prints the outcomes and every failure with the seed that
 * replays it.
 */
import { rawGarbage, runFuzz, startFuzzTarget } from "./harness.ts";
import { runHeadFuzz } from "./heads.ts";

function flag(name: string, fallback: number): number {
  const at = Deno.args.indexOf(`--${name}`);
  return at >= 0 ? Number(Deno.args[at + 1]) : fallback;
}

const cases = flag("cases", 100_000);
const headCases = flag("head-cases", 20_000);
const seed = flag("seed", Math.floor(Math.random() * 2 ** 31));
const fuzz = await startFuzzTarget();
const started = performance.now();
const report = await runFuzz(fuzz, seed, cases);
await rawGarbage(Number(new URL(fuzz.target.base).port), seed, 200);
const health = await fetch(`${fuzz.target.base}/health`);
await health.body?.cancel();
await fuzz.close();
console.log(
  `seed ${seed}, ${cases} cases in ${((performance.now() - started) / 1000).toFixed(1)} s`,
);
console.log(JSON.stringify(report.outcomes, null, 2));
console.log(`health afterwards: ${health.status}`);
const heads = await runHeadFuzz(seed, headCases);
console.log(
  `request heads: ${headCases} cases, ${heads.whole} let through whole, ${heads.refused} not`,
);
const failures = [...report.failures, ...heads.failures];
for (const failure of failures) console.log(`FAILURE ${failure}`);
console.log(`${failures.length} failures`);
Deno.exit(failures.length === 0 && health.ok ? 0 : 1);
