import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { openKvStore } from "./kv.ts";
import { testClock } from "../../tests/fixtures/clock.ts";

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

Deno.test("KvStore.commitIfUnchanged() commits only while every key read is unchanged", async () => {
  const dir = await Deno.makeTempDir();
  for (const path of [":memory:", `${dir}/one.kv`]) {
    const store = await openKvStore(path);
    try {
      await store.set(["family", "f"], { revoked: false });
      await store.set(["refresh", "old"], "f");
      const family = await store.getEntry<{ revoked: boolean }>(["family", "f"]);
      const old = await store.getEntry<string>(["refresh", "old"]);
      const absent = await store.getEntry(["refresh", "new"]);
      assert.deepEqual(family.value, { revoked: false });
      assert.equal(absent.value, undefined);
      assert.equal(absent.version, null);

      // Someone writes the family after it was read: nothing of the commit happens.
      await store.set(["family", "f"], { revoked: true });
      const refused = await store.commitIfUnchanged([old, family, absent], {
        deletes: [["refresh", "old"]],
        writes: [{ key: ["family", "f"], value: { revoked: false } }, {
          key: ["refresh", "new"],
          value: "f",
        }],
      });
      assert.equal(refused, false, path);
      assert.deepEqual(await store.get(["family", "f"]), { revoked: true }, path);
      assert.equal(await store.get(["refresh", "old"]), "f", path);
      assert.equal(await store.get(["refresh", "new"]), undefined, path);

      // Read again, unchanged since: deletes and writes happen together.
      const again = await store.getEntry(["family", "f"]);
      assert.equal(
        await store.commitIfUnchanged([old, again, absent], {
          deletes: [["refresh", "old"]],
          writes: [{ key: ["refresh", "new"], value: "f" }],
        }),
        true,
        path,
      );
      assert.equal(await store.get(["refresh", "old"]), undefined, path);
      assert.equal(await store.get(["refresh", "new"]), "f", path);
      // An absent key checked as absent fails once it exists.
      assert.equal(await store.commitIfUnchanged([absent], { writes: [] }), false, path);
    } finally {
      store.close();
    }
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("KvStore.commitIfUnchanged() lets one writer of many, on two handles of one file, commit on the same read", async () => {
  const dir = await Deno.makeTempDir();
  const first = await openKvStore(`${dir}/one.kv`);
  const second = await openKvStore(`${dir}/one.kv`);
  try {
    await first.set(["family", "f"], "live");
    const results = await Promise.all(
      [first, second].flatMap((store, i) =>
        Array.from({ length: 5 }, async (_, j) => {
          const entry = await store.getEntry<string>(["family", "f"]);
          if (entry.value !== "live") return false;
          return await store.commitIfUnchanged([entry], {
            writes: [{ key: ["family", "f"], value: `written by ${i}.${j}` }],
          });
        })
      ),
    );
    assert.equal(results.filter(Boolean).length, 1, "exactly one writer saw its read hold");
    assert.match((await second.get<string>(["family", "f"]))!, /^written by /);
  } finally {
    first.close();
    second.close();
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * When Deno KV will delete each key, in ms since the epoch, read from its SQLite file (the
 * `kv` table's `expiration_ms`, -1 for none): the only place the `expireIn` it was given shows.
 */
function expirations(path: string): number[] {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const rows = db.prepare("SELECT expiration_ms FROM kv ORDER BY k").all();
    return rows.map((row) => Number(row.expiration_ms));
  } finally {
    db.close();
  }
}

Deno.test("KvStore tells Deno KV a record's lifetime as counted on the store's clock", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/one.kv`;
  const clock = testClock();
  clock.freeze();
  // The gateway's time runs 30 days ahead of the machine's: a lifetime must be reckoned from
  // the gateway's now, or every record would linger (or, behind, vanish) by the difference.
  clock.advance(30 * 86_400_000);
  const store = await openKvStore(path, { clock });
  try {
    const inTenMinutes = clock.now() + 600_000;
    await store.set(["a", "set"], 1, inTenMinutes);
    await store.set(["b", "consumed"], 2);
    await store.consumeAndWrite(["b", "consumed"], [
      { key: ["c", "written"], value: 3, expiresAt: inTenMinutes },
    ]);
    await store.commitIfUnchanged([], {
      writes: [{ key: ["d", "committed"], value: 4, expiresAt: inTenMinutes }],
    });
    await store.set(["e", "forever"], 5);
  } finally {
    store.close();
  }
  // A yardstick on the machine's clock: a key Deno KV is told directly to keep 11 minutes.
  const kv = await Deno.openKv(path);
  await kv.set(["z", "yardstick"], 6, { expireIn: 11 * 60_000 });
  kv.close();
  try {
    const [set, written, committed, forever, yardstick] = expirations(path);
    assert.equal(forever, -1);
    // Ten minutes and the minute of slack, set a little before the yardstick (however long a
    // loaded machine took between the two, never near the 30 days a wrong clock would add).
    for (const at of [set, written, committed]) {
      const before = yardstick - at;
      assert.ok(before >= 0 && before < 5 * 60_000, `${before} ms before the yardstick`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
