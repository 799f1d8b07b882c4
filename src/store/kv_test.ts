import assert from "node:assert/strict";
import { openKvStore } from "./kv.ts";

Deno.test("KvStore.consume() hands a one-time value to exactly one of many callers", async () => {
  const store = await openKvStore(":memory:");
  try {
    await store.set(["code", "abc"], { user: "u1" });
    const results = await Promise.all(
      Array.from({ length: 20 }, () => store.consume<{ user: string }>(["code", "abc"])),
    );
    assert.equal(results.filter((r) => r !== undefined).length, 1);
    assert.equal(await store.get(["code", "abc"]), undefined);
  } finally {
    store.close();
  }
});

Deno.test("KvStore.setIfAbsent() keeps the first value written", async () => {
  const dir = await Deno.makeTempDir();
  const first = await openKvStore(`${dir}/one.kv`);
  const second = await openKvStore(`${dir}/one.kv`);
  try {
    const [a, b] = await Promise.all([
      first.setIfAbsent(["secret"], "from-first"),
      second.setIfAbsent(["secret"], "from-second"),
    ]);
    assert.equal(a, b, "both processes' views agree on one winner");
    assert.equal(await first.get(["secret"]), a);
  } finally {
    first.close();
    second.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("KvStore.consumeAndWrite() writes only for the one caller that consumed", async () => {
  const store = await openKvStore(":memory:");
  try {
    await store.set(["refresh", "old"], "family-1");
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        store.consumeAndWrite<string>(["refresh", "old"], [
          { key: ["refresh", `new-${i}`], value: "family-1" },
        ])),
    );
    const winners = results.flatMap((r, i) => r === undefined ? [] : [i]);
    assert.equal(winners.length, 1);
    for (let i = 0; i < 10; i++) {
      assert.equal(
        await store.get(["refresh", `new-${i}`]),
        i === winners[0] ? "family-1" : undefined,
      );
    }
    assert.equal(await store.consumeAndWrite(["missing"], [{ key: ["x"], value: 1 }]), undefined);
    assert.equal(await store.get(["x"]), undefined, "nothing is written when nothing was consumed");
  } finally {
    store.close();
  }
});
