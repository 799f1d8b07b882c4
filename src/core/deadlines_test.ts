import assert from "node:assert/strict";
import { Deadlines } from "./deadlines.ts";
import { waitUntil } from "../../tests/fixtures/waits.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

Deno.test("Deadlines fires each deadline once, not before it is due, and never a cancelled one", async () => {
  const deadlines = new Deadlines(10);
  const fired: string[] = [];
  const started = Date.now();
  const at: Record<string, number> = {};
  deadlines.add(30, () => (fired.push("a"), at.a = Date.now() - started));
  const cancelled = deadlines.add(20, () => fired.push("cancelled"));
  deadlines.add(60, () => (fired.push("b"), at.b = Date.now() - started));
  deadlines.cancel(cancelled);
  assert.equal(deadlines.size, 2);
  await waitUntil("both deadlines to fire", () => fired.length >= 2);
  assert.deepEqual(fired, ["a", "b"]);
  assert.ok(at.a >= 30 && at.b >= 60, JSON.stringify(at));
  assert.equal(deadlines.size, 0);
  // The timer stops once there is nothing left (the test sanitizer checks it too).
  await waitUntil("the timer to stop", () => !deadlines.ticking);
});

Deno.test("Deadlines keeps firing the others when one throws", async () => {
  const deadlines = new Deadlines(5);
  const fired: number[] = [];
  const errors: unknown[] = [];
  const onError = (event: ErrorEvent) => {
    event.preventDefault();
    errors.push(event.error);
  };
  globalThis.addEventListener("error", onError);
  try {
    deadlines.add(5, () => {
      throw new Error("boom");
    });
    deadlines.add(5, () => fired.push(2));
    for (let i = 0; i < 50 && fired.length < 1; i++) await sleep(5);
    await sleep(20);
    assert.deepEqual(fired, [2]);
    assert.equal((errors[0] as Error)?.message, "boom");
  } finally {
    globalThis.removeEventListener("error", onError);
  }
});
