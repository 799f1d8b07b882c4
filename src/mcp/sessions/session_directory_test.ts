import assert from "node:assert/strict";
import { openKvStore } from "../../store/kv.ts";
import { testClock } from "../../../tests/fixtures/clock.ts";
import { type SharedSessionRecord, storeSessionDirectory } from "./session_directory.ts";

function frozenClock() {
  const clock = testClock();
  clock.freeze();
  return clock;
}

function record(owner: string, expiresAt: number): SharedSessionRecord {
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
  const clock = frozenClock();
  const store = await openKvStore(":memory:", { clock });
  try {
    const later = clock.now() + 60_000;
    const directory = storeSessionDirectory(store, clock);
    assert.equal(await directory.save("s1", record("a", later), "create"), true);
    assert.equal((await directory.find("s1"))?.owner, "a");
    await directory.end("s1", later);
    assert.equal(await directory.find("s1"), undefined);
    assert.equal(await directory.save("s1", record("b", later), "renew"), false);
    assert.equal(await directory.save("s1", record("a", later), "create"), false);
    assert.equal(await directory.find("s1"), undefined);
  } finally {
    store.close();
  }
});

Deno.test("storeSessionDirectory() renews only a live record", async () => {
  const clock = frozenClock();
  const store = await openKvStore(":memory:", { clock });
  try {
    const directory = storeSessionDirectory(store, clock);
    assert.equal(await directory.save("never", record("a", clock.now() + 60_000), "renew"), false);
    assert.equal(await directory.find("never"), undefined);
    await directory.save("s1", record("a", clock.now() + 1_000), "create");
    clock.advance(2_000);
    assert.equal(await directory.find("s1"), undefined, "expired");
    assert.equal(await directory.save("s1", record("b", clock.now() + 60_000), "renew"), false);
    // Once the tombstone has lapsed the id is free again (ids are random: only for tidiness).
    await directory.end("s2", clock.now() + 1_000);
    clock.advance(2_000);
    assert.equal(await directory.save("s2", record("a", clock.now() + 60_000), "create"), true);
  } finally {
    store.close();
  }
});

Deno.test("storeSessionDirectory() lets an end win over renewals racing it on two handles of one file", async () => {
  const dir = await Deno.makeTempDir();
  const clock = frozenClock();
  const first = await openKvStore(`${dir}/one.kv`, { clock });
  const second = await openKvStore(`${dir}/one.kv`, { clock });
  try {
    const later = clock.now() + 60_000;
    for (let round = 0; round < 20; round++) {
      const id = `s${round}`;
      const a = storeSessionDirectory(first, clock);
      const b = storeSessionDirectory(second, clock);
      await a.save(id, record("a", later), "create");
      await Promise.all([
        ...Array.from({ length: 5 }, () => b.save(id, record("b", later), "renew")),
        a.end(id, later),
        ...Array.from({ length: 5 }, () => a.save(id, record("a", later), "renew")),
      ]);
      assert.equal(await b.find(id), undefined, `round ${round}: the session came back`);
    }
  } finally {
    first.close();
    second.close();
    await Deno.remove(dir, { recursive: true });
  }
});
