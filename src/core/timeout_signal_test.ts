import assert from "node:assert/strict";
import { withTimeout } from "./timeout_signal.ts";
import { testClock } from "../../tests/fixtures/clock.ts";

Deno.test("withTimeout() aborts the work with a TimeoutError when the clock passes ms", async () => {
  const clock = testClock();
  clock.freeze();
  let given: AbortSignal | undefined;
  const work = withTimeout(clock, 1_000, (signal) => {
    given = signal;
    return new Promise((_, reject) =>
      signal.addEventListener("abort", () => reject(signal.reason))
    );
  });
  clock.advance(999);
  assert.equal(given?.aborted, false, "not yet");
  clock.advance(1);
  assert.equal(given?.aborted, true, "aborted as the clock reached ms");
  await assert.rejects(work, {
    name: "TimeoutError",
    message: "The operation was aborted due to timeout",
  });
});

Deno.test("withTimeout() stops its timer when the work settles", async () => {
  const clock = testClock();
  clock.freeze();
  assert.equal(await withTimeout(clock, 1_000, () => Promise.resolve("done")), "done");
  await assert.rejects(withTimeout(clock, 1_000, () => Promise.reject(new Error("failed"))));
  assert.equal(clock.pending, 0);
});
