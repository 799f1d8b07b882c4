import assert from "node:assert/strict";
import { testClock } from "../../../tests/fixtures/clock.ts";
import { DiscoveryCache } from "./cache.ts";

const KEY = DiscoveryCache.key("a", "tools", "*");

Deno.test("DiscoveryCache.get() loads again exactly when the TTL has passed on the clock", async () => {
  const clock = testClock();
  clock.freeze();
  const cache = new DiscoveryCache(1_000, clock);
  let loads = 0;
  const load = () => Promise.resolve(++loads);
  assert.equal(await cache.get(KEY, load), 1);
  clock.advance(999);
  assert.equal(await cache.get(KEY, load), 1, "one millisecond before the TTL: cached");
  clock.advance(1);
  assert.equal(await cache.get(KEY, load), 2, "at the TTL: loaded again");
  assert.deepEqual(cache.stats, { hits: 1, misses: 2, loads: 2 });
});

Deno.test("DiscoveryCache.get() runs one load for concurrent misses and caches no failure", async () => {
  const clock = testClock();
  clock.freeze();
  const cache = new DiscoveryCache(1_000, clock);
  const gate = Promise.withResolvers<string>();
  let loads = 0;
  const slow = () => (loads++, gate.promise);
  const both = Promise.all([cache.get(KEY, slow), cache.get(KEY, slow)]);
  gate.resolve("list");
  assert.deepEqual(await both, ["list", "list"]);
  assert.equal(loads, 1);

  const other = DiscoveryCache.key("b", "tools", "*");
  await assert.rejects(cache.get(other, () => Promise.reject(new Error("down"))), /down/);
  assert.equal(await cache.get(other, () => Promise.resolve("back")), "back");
});

Deno.test("DiscoveryCache.invalidate() drops a member's list in one scope and tells each listener which", async () => {
  const clock = testClock();
  clock.freeze();
  const cache = new DiscoveryCache(60_000, clock);
  const heard: string[] = [];
  const stop = cache.onInvalidate((member, kinds, scope) =>
    heard.push(`${member}:${kinds}:${scope}`)
  );
  let loads = 0;
  const load = () => Promise.resolve(++loads);
  await cache.get(DiscoveryCache.key("a", "tools", "user:1|sampling"), load);
  await cache.get(DiscoveryCache.key("a", "tools", "user:2|sampling"), load);
  await cache.get(DiscoveryCache.key("a", "prompts", "user:1|"), load);
  cache.invalidate("a", ["tools"], "user:1");
  assert.deepEqual(heard, ["a:tools:user:1"]);
  assert.equal(await cache.get(DiscoveryCache.key("a", "tools", "user:1|sampling"), load), 4);
  assert.equal(
    await cache.get(DiscoveryCache.key("a", "tools", "user:2|sampling"), load),
    2,
    "another person's list is kept",
  );
  assert.equal(await cache.get(DiscoveryCache.key("a", "prompts", "user:1|"), load), 3, "kept");
  await cache.get(DiscoveryCache.key("b", "tools", "*|"), load);
  cache.invalidate("b", ["tools"], "*");
  assert.equal(await cache.get(DiscoveryCache.key("b", "tools", "*|"), load), 6, "shared scope");
  stop();
  cache.invalidate("a", ["prompts"], "user:1");
  assert.deepEqual(heard, ["a:tools:user:1", "b:tools:*"], "a listener that stopped hears nothing");
});

Deno.test("DiscoveryCache holds at most maxEntries lists: expired ones go first, then the oldest", async () => {
  const clock = testClock();
  clock.freeze();
  // Every set of capabilities a client declares is a scope of its own: keys without end.
  const cache = new DiscoveryCache(1_000, clock, 3);
  const key = (scope: string) => DiscoveryCache.key("a", "tools", scope);
  for (const scope of ["1", "2", "3"]) await cache.get(key(scope), () => Promise.resolve(scope));
  assert.equal(cache.size, 3);
  clock.advance(1_000);
  await cache.get(key("4"), () => Promise.resolve("4"));
  assert.equal(cache.size, 1, "the expired lists were dropped");
  for (const scope of ["5", "6", "7"]) await cache.get(key(scope), () => Promise.resolve(scope));
  assert.equal(cache.size, 3);
  let loads = 0;
  assert.equal(await cache.get(key("7"), () => Promise.resolve(`${++loads}`)), "7", "kept");
  assert.equal(await cache.get(key("4"), () => Promise.resolve(`${++loads}`)), "1", "dropped");
});
