import assert from "node:assert/strict";
import { MADE_ROOM, SessionLimitError, SessionSlots, type SlotHolder } from "./session_slots.ts";

/** A session as places see it: busy or idle, and a backend that stops when told to. */
class Holder implements SlotHolder {
  closed = false;
  pendingCount = 0;
  openStreams = 0;
  channel: unknown = {};
  closedWith?: string;
  readonly #stopped = Promise.withResolvers<void>();

  readonly activity: { recency: number };

  constructor(readonly name: string, recency: number) {
    this.activity = { recency };
  }

  get stopped(): Promise<void> {
    return this.#stopped.promise;
  }

  /** Ends the session; its backend stops when `backendStops` is called. */
  close(reason: string): Promise<void> {
    this.closed = true;
    this.closedWith ??= reason;
    return this.stopped;
  }

  backendStops(): void {
    this.#stopped.resolve();
  }
}

const limits = { sessionsPerUser: 2, maxSessions: 10 };

async function holding(slots: SessionSlots, user: string, ...holders: Holder[]) {
  for (const holder of holders) slots.hold(await slots.reserve(user), holder);
}

/** Lets settled promises' callbacks run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

Deno.test("SessionSlots.reserve() ends the least recently used idle session at the person's limit", async () => {
  const slots = new SessionSlots(() => limits);
  const older = new Holder("older", 100);
  const newer = new Holder("newer", 200);
  await holding(slots, "ann", newer, older);
  const reserving = slots.reserve("ann");
  await settle();
  assert.equal(older.closedWith, MADE_ROOM);
  assert.equal(newer.closed, false);
  assert.equal(slots.heldBy("ann"), 2, "the place is taken only once the backend stopped");
  older.backendStops();
  const slot = await reserving;
  slots.hold(slot, new Holder("third", 300));
  await settle();
  assert.equal(slots.heldBy("ann"), 2);
  assert.equal(slots.total, 2);
});

Deno.test("SessionSlots.reserve() refuses when every session of the person is busy", async () => {
  const slots = new SessionSlots(() => limits);
  const streaming = new Holder("streaming", 100);
  streaming.openStreams = 1;
  const calling = new Holder("calling", 200);
  calling.pendingCount = 1;
  await holding(slots, "ann", streaming, calling);
  await assert.rejects(
    slots.reserve("ann"),
    SessionLimitError,
    "too many open sessions for this user (limit 2, limits.sessionsPerUser), and each has a " +
      "request in flight or a stream open: end one with DELETE, or try again once one is idle",
  );
  assert.equal(streaming.closed || calling.closed, false);
  // Another person is not held back by ann's sessions.
  slots.hold(await slots.reserve("bob"), new Holder("bob's", 300));
  assert.equal(slots.total, 3);
});

Deno.test("SessionSlots.reserve() counts a session still being set up as busy", async () => {
  const slots = new SessionSlots(() => limits);
  const fresh = new Holder("fresh", 100);
  fresh.channel = undefined;
  const other = new Holder("other", 200);
  other.openStreams = 1;
  await holding(slots, "ann", fresh, other);
  await assert.rejects(slots.reserve("ann"), SessionLimitError);
  assert.equal(fresh.closed, false);
});

Deno.test("SessionSlots.reserve() takes over the place of a session still stopping instead of ending another", async () => {
  const slots = new SessionSlots(() => limits);
  const stopping = new Holder("stopping", 300);
  const idle = new Holder("idle", 100);
  await holding(slots, "ann", stopping, idle);
  void stopping.close("the client ended the session");
  const reserving = slots.reserve("ann");
  let reserved = false;
  void reserving.then(() => reserved = true);
  await settle();
  assert.equal(reserved, false, "its backend still runs: no place yet");
  assert.equal(idle.closed, false, "the idle session was not ended");
  stopping.backendStops();
  await reserving;
  assert.equal(slots.heldBy("ann"), 2);
});

Deno.test("SessionSlots.hold() frees the place only once the backend has stopped", async () => {
  const slots = new SessionSlots(() => limits);
  const holder = new Holder("one", 100);
  await holding(slots, "ann", holder);
  void holder.close("the client ended the session");
  await settle();
  assert.equal(slots.heldBy("ann"), 1);
  holder.backendStops();
  await settle();
  assert.equal(slots.heldBy("ann"), 0);
  assert.equal(slots.total, 0);
});

Deno.test("SessionSlots.reserve() refuses at limits.maxSessions without ending anyone's session", async () => {
  const slots = new SessionSlots(() => ({ sessionsPerUser: 5, maxSessions: 2 }));
  const ann = new Holder("ann's", 100);
  const bob = new Holder("bob's", 200);
  await holding(slots, "ann", ann);
  await holding(slots, "bob", bob);
  await assert.rejects(
    slots.reserve("cat"),
    SessionLimitError,
    "the gateway holds its maximum of 2 sessions (limits.maxSessions); try again later",
  );
  assert.equal(ann.closed || bob.closed, false);
});
