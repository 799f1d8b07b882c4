import assert from "node:assert/strict";
import { CallWindow, quantile, WINDOW_MINUTES } from "./call_window.ts";
import { LATENCY_BUCKETS } from "./metrics.ts";

const MINUTE = 60_000;
const T0 = 1_000 * MINUTE;

Deno.test("series() gives each of the last 60 minutes its calls, errors, p50 and p99", () => {
  const window = new CallWindow();
  for (let i = 0; i < 98; i++) window.record("wiki", 3, "ok", T0);
  window.record("wiki", 800, "error", T0, -32603);
  window.record("wiki", 800, "timeout", T0);
  window.record("wiki", 20, "ok", T0 + 2 * MINUTE);
  const series = window.series("wiki", T0 + 2 * MINUTE);
  assert.equal(series.length, WINDOW_MINUTES);
  const [before, idle, now] = series.slice(-3);
  assert.deepEqual(before, { at: T0, calls: 100, errors: 2, p50: 0.005, p99: 1 });
  assert.deepEqual(idle, { at: T0 + MINUTE, calls: 0, errors: 0 });
  assert.deepEqual(now, { at: T0 + 2 * MINUTE, calls: 1, errors: 0, p50: 0.025, p99: 0.025 });
  assert.deepEqual(window.lastFailure("wiki"), { at: T0, outcome: "timeout" });
  assert.equal(window.lastCall("wiki"), T0 + 2 * MINUTE);
});

Deno.test("series() forgets a minute an hour old when its slot is reused", () => {
  const window = new CallWindow();
  window.record("wiki", 3, "ok", T0);
  const later = T0 + WINDOW_MINUTES * MINUTE;
  assert.ok(window.series("wiki", later).every((minute) => minute.calls === 0));
  window.record("wiki", 3, "ok", later);
  assert.equal(window.series("wiki", later).at(-1)!.calls, 1);
});

Deno.test("quantile() names the upper bound of the bucket holding the rank, Infinity past 60 s", () => {
  const buckets = new Array(LATENCY_BUCKETS.length + 1).fill(0);
  buckets[0] = 1;
  buckets[LATENCY_BUCKETS.length] = 1;
  assert.equal(quantile(buckets, 2, 0.5), 0.001);
  assert.equal(quantile(buckets, 2, 0.99), Infinity);
});
