import assert from "node:assert/strict";
import { type TestClock, testClock } from "../../tests/fixtures/clock.ts";
import { waitUntil } from "../../tests/fixtures/waits.ts";
import { openKvStore } from "../store/kv.ts";
import type { Store } from "../store/store.ts";
import { GrantStore } from "./grants.ts";
import { Revocations } from "./revocations.ts";

const LIFETIMES = { codeMs: 60_000, refreshMs: 3_600_000, accessMs: 300_000 };
/** A revocation is kept for the access-token lifetime plus the 30 s clock leeway. */
const KEPT_MS = LIFETIMES.accessMs + 30_000;

interface Replicas {
  store: Store;
  clock: TestClock;
  /** Replica A: revokes, and knows its own revocations at once. */
  grants: GrantStore;
  here: Revocations;
  /** Replica B: learns of them only from storage. */
  there: Revocations;
  /** How many times B listed the revocations. */
  listings: () => number;
}

/** `kv` as it is, but for the methods `overrides` replaces (to count or break them). */
function through(kv: Store, overrides: Partial<Store>): Store {
  return {
    get: (key) => kv.get(key),
    getEntry: (key) => kv.getEntry(key),
    set: (key, value, expiresAt) => kv.set(key, value, expiresAt),
    setIfAbsent: (key, value) => kv.setIfAbsent(key, value),
    consume: (key) => kv.consume(key),
    consumeAndWrite: (key, writes) => kv.consumeAndWrite(key, writes),
    commitIfUnchanged: (checks, changes) => kv.commitIfUnchanged(checks, changes),
    delete: (key) => kv.delete(key),
    list: (prefix, limit) => kv.list(prefix, limit),
    close: () => kv.close(),
    ...overrides,
  };
}

async function withReplicas(test: (r: Replicas) => Promise<void>): Promise<void> {
  const kv = await openKvStore(":memory:");
  let listings = 0;
  const counted = through(kv, { list: (prefix, limit) => (listings++, kv.list(prefix, limit)) });
  const clock = testClock();
  clock.freeze();
  const here = new Revocations({ store: kv, clock });
  const there = new Revocations({ store: counted, clock });
  const grants = new GrantStore(kv, clock, LIFETIMES, (id, until) => here.noteRevoked(id, until));
  try {
    await test({ store: kv, clock, grants, here, there, listings: () => listings });
  } finally {
    await here.close();
    await there.close();
    kv.close();
  }
}

async function openFamily(grants: GrantStore): Promise<string> {
  const code = await grants.issueCode({
    clientId: "client-1",
    identity: { subject: "oidc:alice", email: "alice@example.com" },
    audience: ["https://gw.example.com/alpha"],
    scope: "mcp",
    redirectUri: "x",
    codeChallenge: "y",
  });
  const redemption = await grants.redeemCode(code);
  assert.ok(redemption.ok);
  return redemption.familyId;
}

Deno.test("Revocations.has() knows a grant revoked here at once, and one revoked elsewhere after refresh() reads storage", async () => {
  await withReplicas(async ({ grants, here, there }) => {
    await there.start();
    const familyId = await openFamily(grants);
    const heard: string[][] = [];
    there.onRevoked((ids) => heard.push(ids));
    await grants.revokeFamily(familyId);
    assert.equal(here.has(familyId), true);
    assert.equal(there.has(familyId), false, "no storage read per question");
    await there.refresh();
    assert.equal(there.has(familyId), true);
    assert.deepEqual(heard, [[familyId]]);
    await there.refresh();
    assert.deepEqual(heard, [[familyId]], "a listener hears of a revocation once");
  });
});

Deno.test("Revocations.refresh() lists the revocations again only when the epoch moved", async () => {
  await withReplicas(async ({ grants, there, listings }) => {
    await there.start();
    assert.equal(listings(), 1);
    await there.refresh();
    await there.refresh();
    assert.equal(listings(), 1, "an unchanged epoch costs one small read, no listing");
    await grants.revokeFamily(await openFamily(grants));
    await there.refresh();
    assert.equal(listings(), 2);
  });
});

Deno.test("Revocations.start() polls on its clock every pollMs, and close() stops it", async () => {
  await withReplicas(async ({ clock, grants, there }) => {
    const pending = clock.pending;
    await there.start();
    assert.equal(clock.pending, pending + 1, "one interval timer");
    const familyId = await openFamily(grants);
    await grants.revokeFamily(familyId);
    clock.advance(1_999);
    assert.equal(there.has(familyId), false);
    clock.advance(1);
    await waitUntil("the poll to read the revocation", () => there.has(familyId));
    await there.close();
    assert.equal(clock.pending, pending, "close() clears the timer");
  });
});

Deno.test("Revocations.has() forgets a revocation once no token of its grant could still verify", async () => {
  await withReplicas(async ({ clock, grants, here, there }) => {
    const familyId = await openFamily(grants);
    await grants.revokeFamily(familyId);
    await there.refresh();
    clock.advance(KEPT_MS - 1);
    assert.equal(here.has(familyId), true);
    assert.equal(there.has(familyId), true);
    clock.advance(1);
    assert.equal(here.has(familyId), false);
    assert.equal(there.has(familyId), false);
  });
});

Deno.test("Revocations.refresh() keeps what it knew when storage fails, and says so", async () => {
  await withReplicas(async ({ clock, grants, store }) => {
    const errors: unknown[] = [];
    let broken = false;
    const flaky = through(store, {
      getEntry: (key) =>
        broken ? Promise.reject(new Error("storage unreachable")) : store.getEntry(key),
    });
    const replica = new Revocations({ store: flaky, clock, onError: (e) => errors.push(e) });
    const familyId = await openFamily(grants);
    await grants.revokeFamily(familyId);
    await replica.refresh();
    broken = true;
    await replica.refresh();
    assert.equal(replica.has(familyId), true);
    assert.equal(errors.length, 1);
    assert.match(String(errors[0]), /storage unreachable/);
  });
});
