import assert from "node:assert/strict";
import { waitAtMost } from "./clock.ts";
import { testClock } from "../../tests/fixtures/clock.ts";

Deno.test("waitAtMost() gives the promise's value when it settles in time and clears its timer", async () => {
  const clock = testClock();
  clock.freeze();
  assert.equal(await waitAtMost(clock, 1_000, Promise.resolve("done")), "done");
  assert.equal(clock.pending, 0);
});

Deno.test("waitAtMost() gives undefined once the clock passes the limit, not before", async () => {
  const clock = testClock();
  clock.freeze();
  let settled = false;
  const waiting = waitAtMost(clock, 1_000, new Promise<string>(() => {})).then((value) => {
    settled = true;
    return value;
  });
  clock.advance(999);
  await Promise.resolve();
  assert.equal(settled, false);
  clock.advance(1);
  assert.equal(await waiting, undefined);
  assert.equal(clock.pending, 0);
});

Deno.test("waitAtMost() gives undefined for a promise that fails", async () => {
  const clock = testClock();
  clock.freeze();
  assert.equal(await waitAtMost(clock, 1_000, Promise.reject(new Error("gone"))), undefined);
});
