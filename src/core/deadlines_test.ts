import assert from "node:assert/strict";
import { Deadlines } from "./deadlines.ts";
import { testClock } from "../../tests/fixtures/clock.ts";

function frozen() {
  const clock = testClock();
  clock.freeze();
  return { clock, deadlines: new Deadlines(clock, 10) };
}

Deno.test("Deadlines.add() fires each deadline once when due, never before, never a cancelled one", () => {
  const { clock, deadlines } = frozen();
  const fired: string[] = [];
  deadlines.add(30, () => fired.push("a"));
  const cancelled = deadlines.add(20, () => fired.push("cancelled"));
  deadlines.add(60, () => fired.push("b"));
  deadlines.cancel(cancelled);
  assert.equal(deadlines.size, 2);
  clock.advance(29);
  assert.deepEqual(fired, []);
  clock.advance(11);
  assert.deepEqual(fired, ["a"]);
  clock.advance(30);
  assert.deepEqual(fired, ["a", "b"]);
  clock.advance(1_000);
  assert.deepEqual(fired, ["a", "b"]);
  assert.equal(deadlines.size, 0);
});

Deno.test("Deadlines stops its timer after an idle tick and starts it again for a new deadline", () => {
  const { clock, deadlines } = frozen();
  deadlines.add(10, () => {});
  assert.equal(deadlines.ticking, true);
  clock.advance(20);
  assert.equal(deadlines.size, 0);
  clock.advance(10);
  assert.equal(deadlines.ticking, false);
  assert.equal(clock.pending, 0);
  let fired = false;
  deadlines.add(10, () => fired = true);
  assert.equal(deadlines.ticking, true);
  clock.advance(20);
  assert.equal(fired, true);
});

Deno.test("Deadlines keeps firing the others when one throws", async () => {
  const { clock, deadlines } = frozen();
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
    clock.advance(20);
    assert.deepEqual(fired, [2]);
    // The error is rethrown on a microtask, so it reaches the process's error handler.
    await Promise.resolve();
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.equal((errors[0] as Error)?.message, "boom");
  } finally {
    globalThis.removeEventListener("error", onError);
    clock.advance(100);
  }
});
