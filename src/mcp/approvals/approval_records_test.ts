import assert from "node:assert/strict";
import { openKvStore } from "../../store/kv.ts";
import { testClock } from "../../../tests/fixtures/clock.ts";
import { ApprovalLimitError, ApprovalRecords, type NewApproval } from "./approval_records.ts";

function facts(tool: string, digest = "d1", person = "oidc:alice"): NewApproval {
  return {
    person: { id: person, email: "alice@example.com" },
    server: "github",
    tool,
    digest,
    shown: { path: "/x" },
    by: "caller",
  };
}

async function setup() {
  const store = await openKvStore(":memory:");
  const clock = testClock();
  clock.freeze();
  return { store, clock, records: new ApprovalRecords(store, clock) };
}

Deno.test("ApprovalRecords.create() binds a call once; the same call finds the same approval", async () => {
  const { store, records } = await setup();
  try {
    const first = await records.create(facts("delete_repo"), 60_000, 20);
    assert.equal(first.created, true);
    assert.match(first.record.id, /^[A-Za-z0-9_-]{43}$/);
    const again = await records.create(facts("delete_repo"), 60_000, 20);
    assert.deepEqual(again, { record: first.record, created: false });
    const found = await records.forCall("oidc:alice", "github", "delete_repo", "d1");
    assert.equal(found?.id, first.record.id);
    // Other arguments, another person: not this approval.
    assert.equal(await records.forCall("oidc:alice", "github", "delete_repo", "d2"), undefined);
    assert.equal(await records.forCall("oidc:bob", "github", "delete_repo", "d1"), undefined);
  } finally {
    store.close();
  }
});

Deno.test("ApprovalRecords.move() lets one of two racing decisions win, and a used approval is gone", async () => {
  const { store, records } = await setup();
  try {
    const { record } = await records.create(facts("merge"), 60_000, 20);
    const [approve, deny] = await Promise.all([
      records.move(record.id, ["pending"], "approved", { decidedBy: "a" }),
      records.move(record.id, ["pending"], "denied", { decidedBy: "b" }),
    ]);
    assert.equal([approve, deny].filter(Boolean).length, 1, "exactly one decision");
    if (approve) {
      const [one, two] = await Promise.all([
        records.move(record.id, ["approved"], "used"),
        records.move(record.id, ["approved"], "used"),
      ]);
      assert.equal([one, two].filter(Boolean).length, 1, "used once");
      assert.equal(await records.forCall("oidc:alice", "github", "merge", "d1"), undefined);
    }
  } finally {
    store.close();
  }
});

Deno.test("ApprovalRecords reads a pending or approved record past its time as expired", async () => {
  const { store, clock, records } = await setup();
  try {
    const { record } = await records.create(facts("pay"), 60_000, 20);
    await records.move(record.id, ["pending"], "approved");
    clock.advance(60_000);
    assert.equal((await records.get(record.id))?.status, "expired");
    assert.equal(await records.move(record.id, ["approved"], "used"), undefined);
  } finally {
    store.close();
  }
});

Deno.test("ApprovalRecords.create() refuses past perUser waiting; a decision frees a place", async () => {
  const { store, records } = await setup();
  try {
    const a = await records.create(facts("a"), 60_000, 2);
    await records.create(facts("b"), 60_000, 2);
    await assert.rejects(() => records.create(facts("c"), 60_000, 2), ApprovalLimitError);
    // Someone else is not counted against Alice.
    await records.create(facts("c", "d1", "oidc:bob"), 60_000, 2);
    await records.move(a.record.id, ["pending"], "denied");
    assert.equal((await records.create(facts("c"), 60_000, 2)).created, true);
  } finally {
    store.close();
  }
});

Deno.test("ApprovalRecords.get() names nothing for an id that is not one it issues", async () => {
  const { store, records } = await setup();
  try {
    assert.equal(await records.get("../../etc"), undefined);
    assert.equal(await records.get("short"), undefined);
  } finally {
    store.close();
  }
});
