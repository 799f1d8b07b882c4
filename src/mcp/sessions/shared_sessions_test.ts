import assert from "node:assert/strict";
import type { Limits, ServerConfig } from "../../config/types.ts";
import { DEFAULT_LIMITS } from "../../config/limits.ts";
import { Deadlines } from "../../core/deadlines.ts";
import { userId } from "../../core/ids.ts";
import type { Principal } from "../../core/principal.ts";
import { createLogger } from "../../observability/logger.ts";
import type { JSONRPCMessage } from "../../sdk.ts";
import { openKvStore } from "../../store/kv.ts";
import type { Store } from "../../store/store.ts";
import { type TestClock, testClock } from "../../../tests/fixtures/clock.ts";
import { MemoryBackends } from "../../../tests/fixtures/memory_backend.ts";
import { waitUntil, within } from "../../../tests/fixtures/waits.ts";
import type { ClientChannel, Session } from "./session.ts";
import { SessionRegistry } from "./sessions.ts";
import { OWNERSHIP_CHECK_MS, storeSessionDirectory } from "./shared_sessions.ts";

/** Only sessions whose backend speaks Streamable HTTP can be continued elsewhere. */
const SERVER = {
  name: "api",
  transport: "streamable-http",
  url: "http://127.0.0.1:9/mcp",
} as ServerConfig;
const ANN: Principal = { id: userId("ann") };
const IDLE_MS = 60_000;

/** The defaults, with room for few sessions and processes and the test's idle timeout. */
const LIMITS: Limits = {
  ...DEFAULT_LIMITS,
  sessionsPerUser: 5,
  maxSessions: 10,
  sessionIdleTimeoutMs: IDLE_MS,
  maxMessageBytes: 1_048_576,
  maxStreamBufferBytes: 1_048_576,
  maxProcesses: 100,
};

interface Replica {
  sessions: SessionRegistry;
  backends: MemoryBackends;
  logs: string[];
}

/** Two replicas sharing one store and one (frozen) clock, each with its own backends. */
async function twoReplicas(): Promise<
  { a: Replica; b: Replica; clock: TestClock; close(): Promise<void> }
> {
  const clock = testClock();
  clock.freeze();
  const store = await openKvStore(":memory:", { clock });
  const a = replica("a", store, clock);
  const b = replica("b", store, clock);
  return {
    a,
    b,
    clock,
    async close() {
      await Promise.all([a.sessions.closeAll("test over"), b.sessions.closeAll("test over")]);
      store.close();
    },
  };
}

function replica(owner: string, store: Store, clock: TestClock): Replica {
  const backends = new MemoryBackends();
  const logs: string[] = [];
  const sessions = new SessionRegistry({
    limits: LIMITS,
    logger: createLogger("info", (line) => logs.push(line)),
    clock,
    deadlines: new Deadlines(clock),
    killGraceMs: 100,
    connect: backends.connect,
    idPrefix: owner,
    sharing: { directory: storeSessionDirectory(store, clock), owner },
  });
  return { sessions, backends, logs };
}

class Inbox implements ClientChannel {
  readonly messages: JSONRPCMessage[] = [];
  endedWith?: string;
  deliver(message: JSONRPCMessage): void {
    this.messages.push(message);
  }
  ended(reason: string): void {
    this.endedWith = reason;
  }
}

/** Lets what a request started in the background (an ownership check) run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

/** A session opened on `replica` as a front opens one: its client's answer to initialize arrives. */
async function initialized(replica: Replica): Promise<{ session: Session; inbox: Inbox }> {
  const session = await replica.sessions.open(SERVER, ANN);
  const inbox = new Inbox();
  session.attach(inbox);
  await session.fromClient({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: { roots: {} },
      clientInfo: { name: "test", version: "1" },
    },
  } as JSONRPCMessage);
  // The answer (and with it the session id) reaches the client only once the record is shared.
  await waitUntil("the answer to initialize", () => inbox.messages.length > 0);
  return { session, inbox };
}

Deno.test("SessionRegistry.find() continues a session another replica published to the shared store", async () => {
  const { a, b, close } = await twoReplicas();
  try {
    const { session } = await initialized(a);
    const continued = await b.sessions.find(session.id, SERVER, ANN);
    assert.ok(continued, "the other replica continues the session");
    assert.equal(continued.id, session.id);
    assert.equal(continued.protocolVersion, "2025-06-18");
    assert.deepEqual(continued.clientCapabilities, { roots: {} });
    assert.equal(continued.channel, undefined, "the front attaches its own channel");
    // The same backend session, not a new one.
    assert.deepEqual(b.backends.made[0].resume, {
      sessionId: "backend-1",
      protocolVersion: "2025-06-18",
    });
    assert.ok(b.logs.some((line) => line.includes('"session continued from another replica"')));
    // Found again on the second replica, it is the one it holds now.
    assert.equal(await b.sessions.find(session.id, SERVER, ANN), continued);
  } finally {
    await close();
  }
});

Deno.test("SessionRegistry.find() continues no other person's and no other server's shared session", async () => {
  const { a, b, close } = await twoReplicas();
  try {
    const { session } = await initialized(a);
    assert.equal(await b.sessions.find(session.id, SERVER, { id: userId("bob") }), undefined);
    const other = { ...SERVER, name: "other" } as ServerConfig;
    assert.equal(await b.sessions.find(session.id, other, ANN), undefined);
    assert.equal(b.backends.made.length, 0, "no backend connected for it");
  } finally {
    await close();
  }
});

Deno.test("SessionRegistry.find() does not continue a session ended for good on another replica (its tombstone)", async () => {
  const { a, b, close } = await twoReplicas();
  try {
    const { session } = await initialized(a);
    assert.equal(
      await a.sessions.end(session.id, SERVER, ANN, "the client ended the session"),
      true,
    );
    assert.equal(a.backends.made[0].ended, "closed");
    assert.equal(await b.sessions.find(session.id, SERVER, ANN), undefined);
    assert.equal(b.backends.made.length, 0);
  } finally {
    await close();
  }
});

Deno.test("SessionRegistry.end() ends a session another replica holds: its backend session ends, and the holder lets go at its next ownership check", async () => {
  const { a, b, clock, close } = await twoReplicas();
  try {
    const { session, inbox } = await initialized(a);
    // The client's DELETE lands on the replica that does not hold the session.
    assert.equal(
      await b.sessions.end(session.id, SERVER, ANN, "the client ended the session"),
      true,
    );
    assert.deepEqual(b.backends.made[0].resume?.sessionId, "backend-1");
    assert.equal(b.backends.made[0].ended, "closed", "the backend session was ended");
    assert.equal(await b.sessions.find(session.id, SERVER, ANN), undefined);
    // The holder finds out at its next ownership check, and lets go without ending anything.
    assert.equal(await a.sessions.find(session.id, SERVER, ANN), session);
    await settle();
    assert.equal(session.closed, false, "ownership is checked at most every OWNERSHIP_CHECK_MS");
    clock.advance(OWNERSHIP_CHECK_MS);
    await a.sessions.find(session.id, SERVER, ANN);
    await within("the holder to let go", session.stopped);
    assert.equal(session.released, true);
    assert.equal(inbox.endedWith, "the session was ended on another replica");
    assert.equal(a.backends.made[0].ended, "detached");
  } finally {
    await close();
  }
});

Deno.test("SessionRegistry.reapIdle() lets go of an idle shared session another replica now serves, and the owner ends it", async () => {
  const { a, b, clock, close } = await twoReplicas();
  try {
    const { session } = await initialized(a);
    const continued = await b.sessions.find(session.id, SERVER, ANN);
    assert.ok(continued);
    clock.advance(IDLE_MS + 1);
    a.sessions.reapIdle();
    await within("the first replica to let go", session.stopped);
    assert.equal(session.released, true);
    assert.equal(a.backends.made[0].ended, "detached", "the backend session goes on");
    // The second replica's copy idles out too, and as the owner it ends the backend session.
    b.sessions.reapIdle();
    await within("the owner to end it", continued.stopped);
    assert.equal(continued.released, false);
    assert.equal(b.backends.made[0].ended, "closed");
  } finally {
    await close();
  }
});
