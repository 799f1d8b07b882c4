import assert from "node:assert/strict";
import { openKvStore } from "../store/kv.ts";
import { type SharedSessionRecord, storeSessionDirectory } from "./shared_sessions.ts";

const NOW = 1_000_000;

function record(owner: string, expiresAt = NOW + 60_000): SharedSessionRecord {
  return {
    server: "api",
    principal: { id: "ann" },
    backendSessionId: "backend-1",
    protocolVersion: "2025-11-25",
    clientCapabilities: {},
    owner,
    expiresAt,
  } as SharedSessionRecord;
}

Deno.test("storeSessionDirectory() keeps an ended session ended: no renew or create brings it back", async () => {
  const store = await openKvStore(":memory:");
  try {
    const directory = storeSessionDirectory(store, () => NOW);
    assert.equal(await directory.save("s1", record("a"), "create"), true);
    assert.equal((await directory.find("s1"))?.owner, "a");
    await directory.end("s1", NOW + 60_000);
    assert.equal(await directory.find("s1"), undefined);
    assert.equal(await directory.save("s1", record("b"), "renew"), false);
    assert.equal(await directory.save("s1", record("a"), "create"), false);
    assert.equal(await directory.find("s1"), undefined);
  } finally {
    store.close();
  }
});

Deno.test("storeSessionDirectory() renews only a live record", async () => {
  const store = await openKvStore(":memory:");
  try {
    let now = NOW;
    const directory = storeSessionDirectory(store, () => now);
    assert.equal(await directory.save("never", record("a"), "renew"), false);
    assert.equal(await directory.find("never"), undefined);
    await directory.save("s1", record("a", NOW + 1_000), "create");
    now += 2_000;
    assert.equal(await directory.find("s1"), undefined, "expired");
    assert.equal(await directory.save("s1", record("b"), "renew"), false);
    // Once the tombstone has lapsed the id is free again (ids are random: only for tidiness).
    await directory.end("s2", now + 1_000);
    now += 2_000;
    assert.equal(await directory.save("s2", record("a", now + 60_000), "create"), true);
  } finally {
    store.close();
  }
});

Deno.test("storeSessionDirectory() lets an end win over renewals racing it on two handles of one file", async () => {
  const dir = await Deno.makeTempDir();
  const first = await openKvStore(`${dir}/one.kv`);
  const second = await openKvStore(`${dir}/one.kv`);
  try {
    for (let round = 0; round < 20; round++) {
      const id = `s${round}`;
      const a = storeSessionDirectory(first, () => NOW);
      const b = storeSessionDirectory(second, () => NOW);
      await a.save(id, record("a"), "create");
      await Promise.all([
        ...Array.from({ length: 5 }, () => b.save(id, record("b"), "renew")),
        a.end(id, NOW + 60_000),
        ...Array.from({ length: 5 }, () => a.save(id, record("a"), "renew")),
      ]);
      assert.equal(await b.find(id), undefined, `round ${round}: the session came back`);
    }
  } finally {
    first.close();
    second.close();
    await Deno.remove(dir, { recursive: true });
  }
});
