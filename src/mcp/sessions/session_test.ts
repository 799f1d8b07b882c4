import assert from "node:assert/strict";
import type { ServerConfig } from "../../config/types.ts";
import { Deadlines } from "../../core/deadlines.ts";
import { type SessionId, userId } from "../../core/ids.ts";
import { createLogger } from "../../observability/logger.ts";
import type { JSONRPCMessage } from "../../sdk.ts";
import { testClock } from "../../../tests/fixtures/clock.ts";
import { MemoryBackends } from "../../../tests/fixtures/memory_backend.ts";
import { waitUntil, within } from "../../../tests/fixtures/waits.ts";
import { type ClientChannel, Session, type SessionOptions } from "./session.ts";
import type { AuditEvent } from "../../observability/audit.ts";
import { RpcErrorCode } from "../protocol/jsonrpc.ts";

const SERVER = { name: "memory", transport: "stdio" } as ServerConfig;
const TIMEOUT_MS = 1_000;

/** What the client of a session was told, in order. */
class Inbox implements ClientChannel {
  readonly messages: JSONRPCMessage[] = [];
  endedWith?: string;

  deliver(message: JSONRPCMessage): void {
    this.messages.push(message);
  }

  ended(reason: string): void {
    this.endedWith = reason;
  }

  answer(id: number): Record<string, unknown> | undefined {
    return this.messages.find((m) => "id" in m && m.id === id && !("method" in m)) as
      | Record<string, unknown>
      | undefined;
  }
}

/** A session on a real in-process MCP server, on a frozen clock, initialized. */
async function initializedSession(extra: Partial<SessionOptions> = {}) {
  const clock = testClock();
  clock.freeze();
  const deadlines = new Deadlines(clock);
  const backends = new MemoryBackends();
  const session = new Session({
    id: "s1" as SessionId,
    server: SERVER,
    principal: { id: userId("ann") },
    backend: await backends.connect(SERVER, {}, {}),
    requestTimeoutMs: TIMEOUT_MS,
    logger: createLogger("error"),
    clock,
    deadlines,
    ...extra,
  });
  const inbox = new Inbox();
  session.attach(inbox);
  await session.start();
  await session.fromClient(request(1, "initialize", {
    protocolVersion: "2025-06-18",
    capabilities: { elicitation: {} },
    clientInfo: { name: "test", version: "1" },
  }));
  await waitUntil("the answer to initialize", () => inbox.answer(1) !== undefined);
  await session.fromClient({ jsonrpc: "2.0", method: "notifications/initialized" });
  return { clock, deadlines, backends, session, inbox };
}

function request(id: number, method: string, params: Record<string, unknown> = {}) {
  return { jsonrpc: "2.0", id, method, params } as JSONRPCMessage;
}

const waitCall = (id: number, progressToken?: number) =>
  request(id, "tools/call", {
    name: "wait",
    arguments: {},
    ...(progressToken !== undefined && { _meta: { progressToken } }),
  });

/** Lets the in-process backend and the session handle what is already queued. */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

Deno.test("Session.fromClient() times a request out exactly when the clock passes limits.requestTimeout, not before", async () => {
  const { clock, deadlines, backends, session, inbox } = await initializedSession();
  try {
    await session.fromClient(waitCall(2));
    assert.equal(session.pendingCount, 1);
    clock.advance(TIMEOUT_MS - 1);
    await settle();
    assert.equal(inbox.answer(2), undefined, "no answer before the timeout");
    assert.equal(session.isInFlight(2), true);
    clock.advance(1 + deadlines.resolutionMs);
    const answer = inbox.answer(2) as { error?: { code: number; message: string } };
    assert.deepEqual(answer?.error, {
      code: RpcErrorCode.requestTimeout,
      message: "the backend did not answer tools/call within 1s (limits.requestTimeout)",
    });
    assert.equal(session.pendingCount, 0);
    // The backend is told to stop working on it.
    await waitUntil("the backend to see the cancellation", () => backends.made[0].aborted === 1);
  } finally {
    await session.close("test over");
  }
});

Deno.test("Session.fromClient() starts a request's timeout again when the backend reports progress on it", async () => {
  const { clock, deadlines, backends, session, inbox } = await initializedSession();
  try {
    await session.fromClient(waitCall(2, 77));
    clock.advance(TIMEOUT_MS - 200);
    await backends.progress();
    await waitUntil(
      "the progress to reach the client",
      () => inbox.messages.some((m) => "method" in m && m.method === "notifications/progress"),
    );
    clock.advance(TIMEOUT_MS - 100);
    await settle();
    assert.equal(inbox.answer(2), undefined, "progress gave the request a new timeout");
    clock.advance(100 + deadlines.resolutionMs);
    assert.match(JSON.stringify(inbox.answer(2)), /did not answer tools\/call within 1s/);
  } finally {
    await session.close("test over");
  }
});

Deno.test("Session.close() answers each request still waiting with why the session ended, and ends the backend session", async () => {
  const { backends, session, inbox } = await initializedSession();
  await session.fromClient(waitCall(2));
  await session.close("the client went away");
  const answer = inbox.answer(2) as { error?: { code: number; message: string } };
  assert.deepEqual(answer?.error, {
    code: RpcErrorCode.backendError,
    message: "the client went away before answering tools/call",
  });
  assert.equal(inbox.endedWith, "the client went away");
  assert.equal(session.closed, true);
  await within("the backend to stop", session.stopped);
  assert.equal(backends.made[0].ended, "closed");
});

Deno.test("Session.release() leaves the backend session running for whoever continues it", async () => {
  const { backends, session } = await initializedSession();
  await session.release("another replica continues this session");
  assert.equal(session.released, true);
  assert.equal(backends.made[0].ended, "detached");
});

Deno.test("Session keeps what initialize settled: the client's capabilities and the agreed protocol version, without tasks", async () => {
  const { session, inbox } = await initializedSession();
  try {
    assert.deepEqual(session.clientCapabilities, { elicitation: {} });
    assert.equal(session.protocolVersion, "2025-06-18");
    const result = inbox.answer(1)?.result as { capabilities: Record<string, unknown> };
    assert.ok("tools" in result.capabilities);
    assert.equal("tasks" in result.capabilities, false, "the tasks capability is not passed on");
  } finally {
    await session.close("test over");
  }
});

Deno.test("Session.activity counts a client stream as open until it ends, and each message as activity", async () => {
  const { clock, session } = await initializedSession();
  try {
    const before = session.activity.recency;
    const stream = Promise.withResolvers<string>();
    const held = session.activity.holdStream(stream.promise);
    assert.equal(session.openStreams, 1);
    clock.advance(5_000);
    await session.fromClient(request(3, "tools/call", { name: "hello", arguments: {} }));
    assert.equal(session.activity.last, clock.now());
    assert.ok(session.activity.recency > before);
    stream.resolve("closed");
    assert.equal(await held, "closed");
    assert.equal(session.openStreams, 0);
  } finally {
    await session.close("test over");
  }
});

Deno.test("Session.fromClient() answers a tools/call its tool gate refuses, records it as refused, and never sends it", async () => {
  const events: AuditEvent[] = [];
  const audit = { withArguments: false, record: (event: AuditEvent) => events.push(event) };
  const { session, inbox, backends } = await initializedSession({
    toolGate: { allows: (name) => name !== "hello" },
    audit,
  });
  await session.fromClient(request(2, "tools/call", { name: "hello", arguments: {} }));
  await settle();
  const refused = inbox.answer(2) as { error?: { code: number; message: string } };
  assert.equal(refused.error?.code, -32602);
  assert.match(refused.error!.message, /the tool "hello" is not available to you/);
  assert.deepEqual(events.map((e) => [e.target, e.outcome]), [["hello", "refused"]]);
  assert.equal(backends.calls.filter((call) => call === "hello").length, 0);
  assert.equal(session.pendingCount, 0);
  await session.close("test over");
});

Deno.test("Session shows only the tools its gate allows in every tools/list answer", async () => {
  const { session, inbox } = await initializedSession({
    toolGate: { allows: (name) => name === "wait" },
  });
  await session.fromClient(request(2, "tools/list"));
  await waitUntil("the tools/list answer", () => inbox.answer(2) !== undefined);
  const listed = inbox.answer(2) as { result: { tools: { name: string }[] } };
  assert.deepEqual(listed.result.tools.map((tool) => tool.name), ["wait"]);
  await session.close("test over");
});
