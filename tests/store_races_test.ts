/**
 * The `Store` contract under contention and at its limits, run against every engine (see
 * store_contract_test.ts): two writers, each on its own handle (two replicas), race 1,000 times
 * on one read for commitIfUnchanged and on one value for consume, and exactly one wins every
 * round; values up to 64 KiB are kept and larger ones refused, as are keys over 2 KiB.
 */
import assert from "node:assert/strict";
import { contract } from "./fixtures/stores.ts";

const ROUNDS = 1_000;

contract(
  "two writers on one read: exactly one commitIfUnchanged wins, 1,000 rounds",
  async ({ store, other }) => {
    await store.set(["family", "f"], 0);
    for (let round = 1; round <= ROUNDS; round++) {
      const [a, b] = await Promise.all([
        store.getEntry<number>(["family", "f"]),
        other.getEntry<number>(["family", "f"]),
      ]);
      assert.equal(a.version, b.version, `round ${round}: both read the same version`);
      const results = await Promise.all([
        store.commitIfUnchanged([a], { writes: [{ key: ["family", "f"], value: round }] }),
        other.commitIfUnchanged([b], { writes: [{ key: ["family", "f"], value: -round }] }),
      ]);
      assert.equal(results.filter(Boolean).length, 1, `round ${round}: ${results}`);
      assert.equal(await store.get(["family", "f"]), results[0] ? round : -round, `round ${round}`);
    }
  },
);

contract(
  "two callers consume one value: exactly one gets it, 1,000 rounds",
  async ({ store, other }) => {
    for (let round = 1; round <= ROUNDS; round++) {
      await store.set(["code", round], { round });
      const results = await Promise.all([
        store.consume<{ round: number }>(["code", round]),
        other.consume<{ round: number }>(["code", round]),
      ]);
      assert.deepEqual(results.filter((r) => r !== undefined), [{ round }], `round ${round}`);
    }
    assert.deepEqual(await store.list(["code"]), []);
  },
);

contract(
  "values up to 64 KiB are kept; larger ones and keys over 2 KiB are refused",
  async ({ store }) => {
    const bytes = crypto.getRandomValues(new Uint8Array(65_536));
    await store.set(["big", "bytes"], bytes);
    assert.deepEqual(await store.get(["big", "bytes"]), bytes);
    const text = "x".repeat(60 * 1_024);
    await store.set(["big", "text"], { text });
    assert.deepEqual(await store.get(["big", "text"]), { text });
    await assert.rejects(store.set(["big", "too"], new Uint8Array(65_537)), /too large/i);
    await assert.rejects(store.set(["big", "too"], { text: "x".repeat(65_536) }), /too large/i);
    await assert.rejects(
      store.commitIfUnchanged([], { writes: [{ key: ["big", "too"], value: "y".repeat(70_000) }] }),
      /too large/i,
    );
    assert.equal(await store.get(["big", "too"]), undefined, "nothing of a refused write is kept");
    await assert.rejects(store.set(["k".repeat(2_100)], 1), /too large/i);
    await store.set(["k".repeat(2_000)], 1);
    assert.equal(await store.get(["k".repeat(2_000)]), 1);
  },
);
