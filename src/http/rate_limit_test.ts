import assert from "node:assert/strict";
import { RateLimiter } from "./rate_limit.ts";
import { testClock } from "../../tests/fixtures/clock.ts";

function frozenClock() {
  const clock = testClock();
  clock.freeze();
  return clock;
}

Deno.test("RateLimiter.take() allows a burst of `count`, then refills evenly", () => {
  const clock = frozenClock();
  const limiter = new RateLimiter({ count: 3, perMs: 60_000 }, clock);
  assert.deepEqual([1, 2, 3].map(() => limiter.take("alice")), [0, 0, 0]);
  assert.equal(limiter.take("alice"), 20);
  assert.equal(limiter.take("bob"), 0, "each key has its own bucket");
  clock.advance(19_000);
  assert.equal(limiter.take("alice"), 1);
  clock.advance(1_000);
  assert.equal(limiter.take("alice"), 0);
  assert.equal(limiter.take("alice"), 20);
});

Deno.test("RateLimiter forgets refilled buckets rather than growing without bound", () => {
  const clock = frozenClock();
  const limiter = new RateLimiter({ count: 1, perMs: 1_000 }, clock);
  for (let i = 0; i < 100_000; i++) limiter.take(`address-${i}`);
  assert.equal(limiter.size, 100_000);
  clock.advance(2_000);
  limiter.take("one more");
  assert.equal(limiter.size, 1);
});

Deno.test("RateLimiter.wait() tells how long until a request may go, without taking one", () => {
  const clock = frozenClock();
  const limiter = new RateLimiter({ count: 2, perMs: 60_000 }, clock);
  assert.equal(limiter.wait("mallory"), 0);
  assert.equal(limiter.size, 0, "looking creates no bucket");
  limiter.take("mallory");
  assert.equal(limiter.wait("mallory"), 0);
  assert.equal(limiter.wait("mallory"), 0, "looking again still takes nothing");
  limiter.take("mallory");
  assert.equal(limiter.wait("mallory"), 30);
  clock.advance(30_000);
  assert.equal(limiter.wait("mallory"), 0);
});
