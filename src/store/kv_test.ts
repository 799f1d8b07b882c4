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
