import assert from "node:assert/strict";
import { openKvStore } from "../../store/kv.ts";
import { testClock } from "../../../tests/fixtures/clock.ts";
import { ApprovalBoard } from "./approval_board.ts";
import { ApprovalRecords } from "./approval_records.ts";

async function setup() {
  const store = await openKvStore(":memory:");
  const clock = testClock();
  clock.freeze();
  const records = new ApprovalRecords(store, clock);
  const { record } = await records.create(
    {
      person: { id: "oidc:alice" },
      server: "github",
      tool: "merge",
      digest: "d",
      shown: {},
      by: "caller",
    },
    60_000,
    20,
  );
  return { store, clock, records, record, board: new ApprovalBoard(records, clock, 500) };
}

/** Lets the board's poll (storage reads) run after the clock moved. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

Deno.test("ApprovalBoard.wait() hears a decision written elsewhere at its next poll", async () => {
  const { store, clock, records, record, board } = await setup();
  try {
    let heard: string | undefined;
    const waiting = board.wait(record.id, new AbortController().signal).then((r) =>
      heard = r?.status
    );
    await records.move(record.id, ["pending"], "approved", { decidedBy: "operator" });
    await settle();
    assert.equal(heard, undefined, "not before the poll");
    clock.advance(500);
    await settle();
    await waiting;
    assert.equal(heard, "approved");
    assert.equal(board.size, 0);
  } finally {
    board.close();
    store.close();
  }
});

Deno.test("ApprovalBoard.wait() ends with the expiry, or at once when aborted", async () => {
  const { store, clock, record, board } = await setup();
  try {
    const controller = new AbortController();
    const aborted = board.wait(record.id, controller.signal);
    const expiring = board.wait(record.id, new AbortController().signal);
    controller.abort();
    assert.equal(await aborted, undefined);
    clock.advance(60_000);
    await settle();
    clock.advance(500);
    await settle();
    assert.equal((await expiring)?.status, "expired");
  } finally {
    board.close();
    store.close();
  }
});
