/**
 * `deno task fuzz [--cases N] [--seed S]`: the long fuzz run (100,000 cases by default) against
 * a real gateway; prints the outcomes and every failure with the seed that replays it.
 */
import { rawGarbage, runFuzz, startFuzzTarget } from "./harness.ts";

function flag(name: string, fallback: number): number {
  const at = Deno.args.indexOf(`--${name}`);
  return at >= 0 ? Number(Deno.args[at + 1]) : fallback;
}

const cases = flag("cases", 100_000);
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
for (const failure of report.failures) console.log(`FAILURE ${failure}`);
console.log(`${report.failures.length} failures`);
Deno.exit(report.failures.length === 0 && health.ok ? 0 : 1);
