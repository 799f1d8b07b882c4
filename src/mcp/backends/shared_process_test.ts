import assert from "node:assert/strict";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/inMemory"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { systemClock } from "../../core/clock.ts";
import { createLogger } from "../../observability/logger.ts";
import type { JSONRPCMessage, Transport } from "../../sdk.ts";
import { createFixtureServer } from "../../../tests/fixtures/fixture_tools.ts";
import { waitUntil, within } from "../../../tests/fixtures/waits.ts";
import type { ProcessPort } from "./process_port.ts";
import { SharedProcess } from "./shared_process.ts";

type Message = Record<string, unknown> & { params?: Record<string, unknown> };

/**
 * A SharedProcess on the real fixture server, in process; `toProcess` is every message the
 * gateway wrote to it, `heard(port)` what each session was given.
 */
async function sharedFixture() {
  const [gatewaySide, serverSide] = InMemoryTransport.createLinkedPair();
  await createFixtureServer({ transport: "memory" }).connect(serverSide);
  const toProcess: Message[] = [];
  const send = gatewaySide.send.bind(gatewaySide);
  gatewaySide.send = (message: JSONRPCMessage, options?: Parameters<Transport["send"]>[1]) => {
    toProcess.push(message as Message);
    return send(message, options);
  };
  const process = new SharedProcess({
    transport: gatewaySide,
    clock: systemClock,
    logger: createLogger("error"),
    startTimeoutMs: 10_000,
    everyone: false,
    forwardRoots: true,
    onEnded: () => {},
    onEmpty: () => {},
  });
  const heard = new Map<ProcessPort, Message[]>();
  const join = async () => {
    const port = process.port();
    const messages: Message[] = [];
    heard.set(port, messages);
    port.onmessage = (message) => messages.push(message as Message);
    await within("a session joining the shared process", port.start());
    await port.send({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: { elicitation: {} },
        clientInfo: { name: "t", version: "1" },
      },
    } as JSONRPCMessage);
    return { port, messages };
  };
  return { process, toProcess, join, close: () => process.stop("the test ended") };
}

const call = (id: number, name: string, args: Record<string, unknown> = {}) =>
  ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name, arguments: args },
  }) as JSONRPCMessage;

Deno.test("SharedProcess cancels only the calls of the session that cancels, though both used the same id", async () => {
  const shared = await sharedFixture();
  try {
    const a = await shared.join();
    const b = await shared.join();
    await a.port.send(call(5, "sleep", { ms: 50 }));
    await b.port.send(call(5, "sleep", { ms: 60_000 }));
    const sent = shared.toProcess.filter((m) => m.method === "tools/call").map((m) => m.id);
    assert.equal(new Set(sent).size, 2, "the process saw two distinct ids");
    const cancel = (requestId: number) =>
      ({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId, reason: "test" },
      }) as JSONRPCMessage;
    await b.port.send(cancel(5)); // b's own 5, sent second
    await a.port.send(cancel(99)); // a has no call 99: nothing reaches the process
    const cancels = shared.toProcess.filter((m) => m.method === "notifications/cancelled");
    assert.deepEqual(cancels.map((m) => m.params?.requestId), [sent[1]]);
    await waitUntil("a's call to be answered", () => a.messages.some((m) => m.id === 5));
    assert.match(JSON.stringify(a.messages.find((m) => m.id === 5)), /slept 50ms/);
    assert.equal(b.messages.filter((m) => m.id === 5).length, 0, "b's call was cancelled");
  } finally {
    await shared.close();
  }
});

Deno.test("SharedProcess refuses to the process what it asked of a session that then left; the others go on", async () => {
  const shared = await sharedFixture();
  try {
    const a = await shared.join();
    const b = await shared.join();
    await a.port.send(call(1, "test_elicitation", { message: "who?" }));
    await waitUntil(
      "a to be asked",
      () => a.messages.some((m) => m.method === "elicitation/create"),
    );
    const asked = a.messages.find((m) => m.method === "elicitation/create")!;
    assert.equal(b.messages.some((m) => m.method === "elicitation/create"), false);
    // b cannot answer what a was asked.
    await b.port.send({ jsonrpc: "2.0", id: asked.id, result: { action: "accept" } } as never);
    assert.equal(shared.toProcess.some((m) => m.id === asked.id), false);
    await a.port.close();
    const refusal = shared.toProcess.find((m) => m.id === asked.id && m.error);
    assert.match(JSON.stringify(refusal), /the client session ended/);
    assert.ok(
      shared.toProcess.some((m) => m.method === "notifications/cancelled"),
      "a's call was cancelled at the process",
    );
    await b.port.send(call(2, "test_simple_text"));
    await waitUntil("b's call to be answered", () => b.messages.some((m) => m.id === 2));
    assert.equal(shared.process.sessions, 1);
  } finally {
    await shared.close();
  }
});

/**
 * A process that answers when the test says so, even what it was told to stop: no real server
 * here misbehaves like that on purpose, so this one speaks the wire by script.
 */
class LateProcess implements Transport {
  onmessage?: Transport["onmessage"];
  onerror?: Transport["onerror"];
  onclose?: Transport["onclose"];
  readonly calls: Message[] = [];

  start(): Promise<void> {
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    const m = message as Message;
    if (m.method === "initialize") {
      const result = {
        protocolVersion: "2025-11-25",
        capabilities: {},
        serverInfo: { name: "late", version: "1" },
      };
      queueMicrotask(() =>
        this.onmessage?.({ jsonrpc: "2.0", id: m.id, result } as JSONRPCMessage)
      );
    } else if (m.method === "tools/call") this.calls.push(m);
    return Promise.resolve();
  }

  answer(call: Message, text: string): void {
    this.onmessage?.(
      {
        jsonrpc: "2.0",
        id: call.id,
        result: { content: [{ type: "text", text }] },
      } as JSONRPCMessage,
    );
  }

  close(): Promise<void> {
    this.onclose?.();
    return Promise.resolve();
  }
}

Deno.test("SharedProcess drops an answer to a cancelled call, so it never answers the session's next request with that id", async () => {
  const late = new LateProcess();
  const process = new SharedProcess({
    transport: late,
    clock: systemClock,
    logger: createLogger("error"),
    startTimeoutMs: 10_000,
    everyone: false,
    forwardRoots: true,
    onEnded: () => {},
    onEmpty: () => {},
  });
  const port = process.port();
  const heard: Message[] = [];
  port.onmessage = (message) => heard.push(message as Message);
  try {
    await port.start();
    await port.send(call(5, "slow"));
    await port.send(
      {
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: 5 },
      } as JSONRPCMessage,
    );
    await port.send(call(5, "again"));
    const [first, second] = late.calls;
    assert.notEqual(first.id, second.id);
    late.answer(first, "old");
    late.answer(second, "new");
    assert.deepEqual(heard.map((m) => JSON.stringify(m.result)), [
      JSON.stringify({ content: [{ type: "text", text: "new" }] }),
    ]);
  } finally {
    await process.stop("the test ended");
  }
});

Deno.test("SharedProcess refuses a subscribe or unsubscribe without a string uri, and the process never hears it", async () => {
  const shared = await sharedFixture();
  try {
    const { port, messages } = await shared.join();
    for (
      const [id, method, params] of [
        [1, "resources/subscribe", { uri: ["test://watched-resource"] }],
        [2, "resources/unsubscribe", { uri: 7 }],
        [3, "resources/subscribe", {}],
      ] as const
    ) {
      await port.send({ jsonrpc: "2.0", id, method, params } as JSONRPCMessage);
      const answer = messages.find((message) => message.id === id) as {
        error?: { code: number; message: string };
      };
      assert.equal(answer?.error?.code, -32602, `${method} ${JSON.stringify(params)}`);
      assert.match(answer.error!.message, /needs params\.uri, the resource's URI as a string/);
    }
    const subscribes = shared.toProcess.filter((message) =>
      String(message.method).startsWith("resources/")
    );
    assert.deepEqual(subscribes, [], "nothing reached the process");
  } finally {
    await shared.close();
  }
});
