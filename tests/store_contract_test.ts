/**
 * The `Store` contract, one suite run against every engine (Deno KV in memory and in a file, a
 * real PostgreSQL): what the gateway relies on from storage, method by method. Races and limits
 * are in store_races_test.ts; what only PostgreSQL has (expiry honoured on read, the sweep) in
 * store_postgres_test.ts.
 */
import assert from "node:assert/strict";
import { contract } from "./fixtures/stores.ts";
import type { StoreKey } from "../src/store/store.ts";

const VALUES: [string, unknown][] = [
  ["an object", { user: "u1", scopes: ["a", "b"], nested: { n: 1, none: null } }],
  ["a string", "text ✓ with \u0000 a NUL"],
  ["a number", -12.5],
  ["a boolean", false],
  ["bytes", new Uint8Array([0, 1, 2, 255])],
  ["a bigint", 12345678901234567890n],
  ["a date", new Date(1_700_000_000_000)],
  ["an array of bytes", [new Uint8Array([9]), "x"]],
];

contract("set, get and delete give back every kind of value as written", async ({ store }) => {
  for (const [what, value] of VALUES) {
    await store.set(["value", what], value);
    assert.deepEqual(await store.get(["value", what]), value, what);
  }
  assert.equal(await store.get(["value", "never written"]), undefined);
  await store.delete(["value", "a string"]);
  assert.equal(await store.get(["value", "a string"]), undefined);
  await store.delete(["value", "never written"]);
});

contract("a second handle sees what the first wrote", async ({ store, other }) => {
  await store.set(["shared"], { from: "first" });
  assert.deepEqual(await other.get(["shared"]), { from: "first" });
  await other.delete(["shared"]);
  assert.equal(await store.get(["shared"]), undefined);
});

contract("keys of every part type are kept apart and given back as written", async ({ store }) => {
  const keys: StoreKey[] = [
    ["k", "plain"],
    ["k", ""],
    ["k", "with\u0000nul"],
    ["k", "with\u0000"],
    ["k", 1],
    ["k", -1.5],
    ["k", 0],
    ["k", new Uint8Array([])],
    ["k", new Uint8Array([0])],
    ["k", new Uint8Array([0, 255, 1])],
    ["k", "1"],
    ["k", "plain", 2, new Uint8Array([7])],
  ];
  for (const [i, key] of keys.entries()) await store.set(key, i);
  for (const [i, key] of keys.entries()) assert.equal(await store.get(key), i, String(key));
  const listed = await store.list<number>(["k"]);
  assert.equal(listed.length, keys.length);
  for (const entry of listed) assert.deepEqual(entry.key, keys[entry.value!]);
});

/** Deno KV's order: byte arrays, then strings, then numbers; then by value; a prefix first. */
function compareKeys(a: StoreKey, b: StoreKey): number {
  const rank = (part: StoreKey[number]) =>
    part instanceof Uint8Array ? 0 : typeof part === "string" ? 1 : 2;
  const bytes = (part: StoreKey[number]) =>
    part instanceof Uint8Array ? part : new TextEncoder().encode(part as string);
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const byRank = rank(a[i]) - rank(b[i]);
    if (byRank !== 0) return byRank;
    if (typeof a[i] === "number") {
      const d = (a[i] as number) - (b[i] as number);
      if (d !== 0) return d;
      continue;
    }
    const [x, y] = [bytes(a[i]), bytes(b[i])];
    for (let j = 0; j < Math.min(x.length, y.length); j++) if (x[j] !== y[j]) return x[j] - y[j];
    if (x.length !== y.length) return x.length - y.length;
  }
  return a.length - b.length;
}

contract(
  "list gives every record under a prefix in key order, and no others",
  async ({ store }) => {
    // A seeded generator: the same keys every run, of every part type, in a shuffled order.
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const part = (): StoreKey[number] => {
      const kind = random();
      if (kind < 0.4) {
        return Array.from(
          { length: Math.floor(random() * 4) },
          () => String.fromCodePoint([0, 97, 98, 0xe9, 0x1f600][Math.floor(random() * 5)]),
        ).join("");
      }
      if (kind < 0.7) {
        return Math.round((random() - 0.5) * 2_000) / 8;
      }
      return new Uint8Array(
        Array.from(
          { length: Math.floor(random() * 3) },
          () => [0, 1, 254, 255][Math.floor(random() * 4)],
        ),
      );
    };
    const seen = new Map<string, StoreKey>();
    while (seen.size < 150) {
      const key = ["order", ...Array.from({ length: 1 + Math.floor(random() * 3) }, part)];
      seen.set(
        JSON.stringify(key, (_, v) => v instanceof Uint8Array ? [...v] + "b" : v),
        key,
      );
    }
    const keys = [...seen.values()];
    for (const [i, key] of keys.entries()) await store.set(key, i);
    await store.set(["orde"], "a sibling whose name is a prefix");
    await store.set(["order"], "the prefix itself");
    await store.set(["order-2", "x"], "a sibling after it");
    const listed = await store.list<number>(["order"]);
    assert.deepEqual(listed.map((e) => e.key), [...keys].sort(compareKeys));
    for (const entry of listed) assert.deepEqual(keys[entry.value!], entry.key);
    const firstFive = await store.list(["order"], 5);
    assert.deepEqual(firstFive.map((e) => e.key), listed.slice(0, 5).map((e) => e.key));
    assert.deepEqual(await store.list([new Uint8Array([1])]), []);
    const sub = await store.list<number>(["order", "a"]);
    assert.deepEqual(
      sub.map((e) => e.key),
      listed.filter((e) => e.key[1] === "a" && e.key.length > 2).map((e) => e.key),
    );
  },
);

contract(
  "getEntry's version changes with every write, also a delete and the same value again",
  async ({ store }) => {
    const absent = await store.getEntry(["v"]);
    assert.deepEqual(absent, { key: ["v"], value: undefined, version: null });
    await store.set(["v"], "one");
    const first = await store.getEntry<string>(["v"]);
    assert.equal(first.value, "one");
    assert.notEqual(first.version, null);
    assert.equal((await store.getEntry(["v"])).version, first.version, "a read changes nothing");
    await store.delete(["v"]);
    await store.set(["v"], "one");
    const again = await store.getEntry<string>(["v"]);
    assert.notEqual(again.version, first.version);
    assert.equal(
      await store.commitIfUnchanged([first], { writes: [{ key: ["v"], value: "x" }] }),
      false,
    );
    assert.equal(await store.get(["v"]), "one");
    const listed = await store.list([]);
    assert.equal(listed.find((e) => e.key[0] === "v")?.version, again.version);
  },
);

contract(
  "setIfAbsent keeps the first value and gives it to every later writer",
  async ({ store, other }) => {
    assert.equal(await store.setIfAbsent(["secret"], "first"), "first");
    assert.equal(await other.setIfAbsent(["secret"], "second"), "first");
    assert.equal(await store.get(["secret"]), "first");
    const [a, b] = await Promise.all([
      store.setIfAbsent(["raced"], "from-store"),
      other.setIfAbsent(["raced"], "from-other"),
    ]);
    assert.equal(a, b, "both handles agree on one winner");
    assert.equal(await other.get(["raced"]), a);
  },
);

contract("consume hands a value to one caller of many and removes it", async ({ store, other }) => {
  await store.set(["code", "abc"], { user: "u1" });
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) => (i % 2 ? other : store).consume(["code", "abc"])),
  );
  assert.deepEqual(results.filter((r) => r !== undefined), [{ user: "u1" }]);
  assert.equal(await store.get(["code", "abc"]), undefined);
  assert.equal(await store.consume(["code", "missing"]), undefined);
});

contract(
  "consumeAndWrite writes only for the one caller that consumed",
  async ({ store, other }) => {
    await store.set(["refresh", "old"], "family-1");
    const results = await Promise.all(
      Array.from(
        { length: 10 },
        (_, i) =>
          (i % 2 ? other : store).consumeAndWrite<string>(["refresh", "old"], [
            { key: ["refresh", `new-${i}`], value: "family-1" },
            { key: ["family", `f-${i}`], value: i, expiresAt: Date.now() + 3_600_000 },
          ]),
      ),
    );
    const winners = results.flatMap((r, i) => r === undefined ? [] : [i]);
    assert.equal(winners.length, 1);
    for (let i = 0; i < 10; i++) {
      const won = i === winners[0];
      assert.equal(await store.get(["refresh", `new-${i}`]), won ? "family-1" : undefined);
      assert.equal(await store.get(["family", `f-${i}`]), won ? i : undefined);
    }
    assert.equal(await store.consumeAndWrite(["missing"], [{ key: ["x"], value: 1 }]), undefined);
    assert.equal(await store.get(["x"]), undefined, "nothing is written when nothing was consumed");
  },
);

contract(
  "commitIfUnchanged commits all or nothing, only while every key read is unchanged",
  async ({ store }) => {
    await store.set(["family", "f"], { revoked: false });
    await store.set(["refresh", "old"], "f");
    const family = await store.getEntry<{ revoked: boolean }>(["family", "f"]);
    const old = await store.getEntry<string>(["refresh", "old"]);
    const absent = await store.getEntry(["refresh", "new"]);
    await store.set(["family", "f"], { revoked: true });
    const changes = {
      deletes: [["refresh", "old"]],
      writes: [{ key: ["refresh", "new"], value: "f" }],
    };
    assert.equal(await store.commitIfUnchanged([old, family, absent], changes), false);
    assert.deepEqual(await store.get(["family", "f"]), { revoked: true });
    assert.equal(await store.get(["refresh", "old"]), "f");
    assert.equal(await store.get(["refresh", "new"]), undefined);
    const again = await store.getEntry(["family", "f"]);
    assert.equal(await store.commitIfUnchanged([old, again, absent], changes), true);
    assert.equal(await store.get(["refresh", "old"]), undefined);
    assert.equal(await store.get(["refresh", "new"]), "f");
    assert.equal(
      await store.commitIfUnchanged([absent], { writes: [] }),
      false,
      "no longer absent",
    );
    assert.equal(await store.commitIfUnchanged([], { deletes: [["refresh", "new"]] }), true);
    assert.equal(await store.get(["refresh", "new"]), undefined);
  },
);

contract("a record with an expiry is kept until then", async ({ store }) => {
  await store.set(["soon"], "here", Date.now() + 60_000);
  await store.commitIfUnchanged([], {
    writes: [{ key: ["committed"], value: 1, expiresAt: Date.now() + 60_000 }],
  });
  assert.equal(await store.get(["soon"]), "here");
  assert.equal(await store.get(["committed"]), 1);
  assert.deepEqual((await store.list<string>([])).map((e) => e.value), [1, "here"]);
});
