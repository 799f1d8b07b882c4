import assert from "node:assert/strict";
import type { Limits, ServerConfig } from "../../config/types.ts";
import { DEFAULT_LIMITS } from "../../config/limits.ts";
import { Deadlines } from "../../core/deadlines.ts";
import { userId } from "../../core/ids.ts";
import type { Principal } from "../../core/principal.ts";
import { createLogger } from "../../observability/logger.ts";
import type { JSONRPCMessage } from "../../sdk.ts";
import { testClock } from "../../../tests/fixtures/clock.ts";
import { MemoryBackends } from "../../../tests/fixtures/memory_backend.ts";
import { waitUntil, within } from "../../../tests/fixtures/waits.ts";
import type { ClientChannel, Session } from "./session.ts";
import { MADE_ROOM } from "./session_slots.ts";
import { SessionLimitError, SessionRegistry } from "./sessions.ts";

const SERVER = { name: "memory", transport: "stdio" } as ServerConfig;
const IDLE_MS = 1_000;
const ANN: Principal = { id: userId("ann") };

/** The defaults, with room for few sessions and processes and the test's idle timeout. */
const LIMITS: Limits = {
  ...DEFAULT_LIMITS,
  sessionsPerUser: 2,
  maxSessions: 10,
  sessionIdleTimeoutMs: IDLE_MS,
  maxMessageBytes: 1_048_576,
  maxStreamBufferBytes: 1_048_576,
  maxProcesses: 100,
};

/** A registry of sessions on real in-process MCP servers, on a frozen clock. */
function registry(limits: Partial<Limits> = {}) {
  const clock = testClock();
  clock.freeze();
  const backends = new MemoryBackends();
  const sessions = new SessionRegistry({
    limits: { ...LIMITS, ...limits },
    logger: createLogger("error"),
    clock,
    deadlines: new Deadlines(clock),
    killGraceMs: 100,
    connect: backends.connect,
  });
  return { clock, backends, sessions };
}

/** Why the client of a session was told it ended, if it was. */
class Ended implements ClientChannel {
  reason?: string;
  deliver(): void {}
  ended(reason: string): void {
    this.reason = reason;
  }
}

/** Opens a session for `principal` with a channel to its client, as a front would. */
async function open(sessions: SessionRegistry, principal = ANN) {
  const session = await sessions.open(SERVER, principal);
  const channel = new Ended();
  session.attach(channel);
  return { session, channel };
}

const waitCall = (id: number) =>
  ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "wait", arguments: {} },
  }) as JSONRPCMessage;

/** Lets what the advanced clock started (reaping, closing) run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

Deno.test("SessionRegistry.reapIdle() ends a session idle past limits.sessionIdleTimeout, not one with an open stream or a request in flight", async () => {
  const { clock, backends, sessions } = registry({ sessionsPerUser: 3 });
  try {
    const idle = await open(sessions);
    const streaming = await open(sessions);
    const calling = await open(sessions);
    const stream = Promise.withResolvers<void>();
    void streaming.session.activity.holdStream(stream.promise);
    await calling.session.fromClient(waitCall(1));
    // The reaper runs on the registry's clock; at exactly the idle limit nothing is idle yet.
    clock.advance(IDLE_MS);
    await settle();
    assert.equal(idle.session.closed, false, "not before the idle limit has passed");
    clock.advance(IDLE_MS / 4);
    await within("the idle session to end", idle.session.stopped);
    assert.equal(idle.channel.reason, "the session was idle too long (limits.sessionIdleTimeout)");
    assert.equal(backends.made[0].ended, "closed");
    assert.equal(streaming.session.closed, false, "an open stream keeps a session");
    assert.equal(calling.session.closed, false, "a request in flight keeps a session");
    assert.equal(sessions.size, 2);
    // Once the stream ends and the call is answered, they idle out too.
    stream.resolve();
    backends.release();
    await waitUntil("the call to be answered", () => calling.session.pendingCount === 0);
    clock.advance(IDLE_MS + IDLE_MS / 4);
    await within("both to end", Promise.all([streaming.session.stopped, calling.session.stopped]));
    assert.equal(sessions.size, 0);
  } finally {
    await sessions.closeAll("test over");
  }
});

Deno.test("SessionRegistry.open() ends the person's least recently used idle session at limits.sessionsPerUser", async () => {
  const { clock, sessions } = registry();
  try {
    const older = await open(sessions);
    const newer = await open(sessions);
    clock.advance(10);
    // The older one is used again: now the newer one is the least recently used.
    await older.session.fromClient({ jsonrpc: "2.0", method: "notifications/initialized" });
    const third = await open(sessions);
    assert.equal(newer.session.closed, true);
    assert.equal(newer.channel.reason, MADE_ROOM);
    assert.equal(older.session.closed, false);
    assert.equal(third.session.closed, false);
    assert.equal(sessions.placesHeld, 2);
  } finally {
    await sessions.closeAll("test over");
  }
});

Deno.test("SessionRegistry.open() refuses with SessionLimitError when each of the person's sessions is busy", async () => {
  const { sessions } = registry();
  try {
    const calling = await open(sessions);
    const streaming = await open(sessions);
    await calling.session.fromClient(waitCall(1));
    void streaming.session.activity.holdStream(new Promise(() => {}));
    await assert.rejects(
      sessions.open(SERVER, ANN),
      (error) =>
        error instanceof SessionLimitError &&
        /too many open sessions for this user \(limit 2, limits\.sessionsPerUser\)/.test(
          error.message,
        ),
    );
    assert.equal(calling.session.closed, false);
    assert.equal(streaming.session.closed, false);
  } finally {
    await sessions.closeAll("test over");
  }
});

Deno.test("SessionRegistry.open() refuses past limits.maxSessions and ends nobody else's session for it", async () => {
  const { sessions } = registry({ maxSessions: 2 });
  try {
    const ann = await open(sessions, ANN);
    const bob = await open(sessions, { id: userId("bob") });
    await assert.rejects(
      sessions.open(SERVER, { id: userId("carol") }),
      (error) =>
        error instanceof SessionLimitError &&
        error.message.includes("the gateway holds its maximum of 2 sessions (limits.maxSessions)"),
    );
    assert.equal(ann.session.closed, false);
    assert.equal(bob.session.closed, false);
  } finally {
    await sessions.closeAll("test over");
  }
});

Deno.test("SessionRegistry.findHere() treats another person's or another server's session like an unknown one", async () => {
  const { sessions } = registry();
  try {
    const { session } = await open(sessions);
    assert.equal(sessions.findHere(session.id, SERVER, ANN), session);
    assert.equal(sessions.findHere(session.id, SERVER, { id: userId("bob") }), undefined);
    const other = { ...SERVER, name: "other" } as ServerConfig;
    assert.equal(sessions.findHere(session.id, other, ANN), undefined);
    assert.equal(await sessions.end(session.id, SERVER, { id: userId("bob") }, "no"), false);
    assert.equal(session.closed, false);
    assert.equal(await sessions.end(session.id, SERVER, ANN, "the client ended it"), true);
    assert.equal(sessions.findHere(session.id, SERVER, ANN), undefined);
  } finally {
    await sessions.closeAll("test over");
  }
});

Deno.test("SessionRegistry.closeAll() ends every session and refuses new ones", async () => {
  const { sessions } = registry();
  const sessionsOpen: Session[] = [(await open(sessions)).session, (await open(sessions)).session];
  await sessions.closeAll("the gateway is shutting down");
  assert.ok(sessionsOpen.every((session) => session.closed));
  assert.equal(sessions.placesHeld, 0);
  await assert.rejects(sessions.open(SERVER, ANN), /the gateway is shutting down/);
});
