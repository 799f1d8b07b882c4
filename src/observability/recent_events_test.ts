import assert from "node:assert/strict";
import { RecentEvents } from "./recent_events.ts";

function filled(count: number, capacity = 10): RecentEvents {
  const events = new RecentEvents(capacity);
  for (let i = 1; i <= count; i++) {
    events.add({
      at: i,
      kind: i % 2 ? "call" : "admin",
      person: i % 3 ? "Alice@example.com" : "bob@example.com",
      server: "wiki",
      what: `event ${i}`,
      outcome: "ok",
    });
  }
  return events;
}

Deno.test("query() pages newest first through what the filter admits, within the ring", () => {
  const events = filled(25);
  const first = events.query({}, 0, 4);
  assert.deepEqual(first.events.map((e) => e.what), [
    "event 25",
    "event 24",
    "event 23",
    "event 22",
  ]);
  assert.equal(first.more, true);
  const last = events.query({}, 2, 4);
  assert.deepEqual(last.events.map((e) => e.what), ["event 17", "event 16"]);
  assert.equal(last.more, false);
  const alice = events.query({ person: "alice@EXAMPLE.com", kind: "call" }, 0, 10);
  assert.deepEqual(alice.events.map((e) => e.what), [
    "event 25",
    "event 23",
    "event 19",
    "event 17",
  ]);
});

Deno.test("since() gives what is newer than a sequence number, oldest first, at most the limit", () => {
  const events = filled(5);
  assert.deepEqual(events.since(2, 10).map((e) => e.seq), [3, 4, 5]);
  assert.deepEqual(events.since(0, 2).map((e) => e.seq), [4, 5]);
  assert.deepEqual(events.since(events.latestSeq, 10), []);
});
