import assert from "node:assert/strict";
import {
  CLIENT_INFO_META_KEY,
  createMcpHandler,
  fromJsonSchema,
  type InputRequest,
  inputRequired,
  LOG_LEVEL_META_KEY,
  McpServer,
} from "@modelcontextprotocol/server";
import { testClock } from "../../../tests/fixtures/clock.ts";
import { waitUntil } from "../../../tests/fixtures/waits.ts";
import { createLogger } from "../../observability/logger.ts";
import { SecretMask } from "../../observability/mask.ts";
import type { JSONRPCMessage } from "../../sdk.ts";
import { MAX_INPUT_ROUNDS } from "./modern_calls.ts";
import { ModernBackend } from "./modern_backend.ts";
import { HttpWire } from "./modern_http.ts";

const WATCHED = "test://watched";
const ASK = {
  method: "elicitation/create",
  params: {
    message: "Again?",
    requestedSchema: { type: "object", properties: { ok: { type: "boolean" } } },
  },
} as unknown as InputRequest;
const NO_ARGS = fromJsonSchema<Record<string, unknown>>({ type: "object", properties: {} });

/** A 2026-only server (the v2 SDK, refusing 2025 clients), answered in this process. */
function modernServer() {
  return createMcpHandler(() => {
    const server = new McpServer({ name: "unit-modern", version: "1.0.0" }, {
      capabilities: { tools: { listChanged: true }, resources: { subscribe: true } },
    });
    // Asks on every call, however it was answered.
    server.registerTool("always_asks", { inputSchema: NO_ARGS }, () => {
      return inputRequired({ inputRequests: { q: ASK } });
    });
    server.registerTool("asks_once", { inputSchema: NO_ARGS }, (_args, ctx) => {
      if (ctx.mcpReq.inputResponses?.q) return { content: [{ type: "text", text: "thanks" }] };
      return inputRequired({ inputRequests: { q: ASK } });
    });
    // What the request's `_meta` envelope said: the session's client and log level.
    server.registerTool("envelope", { inputSchema: NO_ARGS }, (_args, ctx) => {
      const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
      const client = envelope?.[CLIENT_INFO_META_KEY] as { name?: string } | undefined;
      const text = `${client?.name} at ${envelope?.[LOG_LEVEL_META_KEY] ?? "no level"}`;
      return { content: [{ type: "text", text }] };
    });
    server.registerResource("watched", WATCHED, {}, () => ({
      contents: [{ uri: WATCHED, text: "w" }],
    }));
    return server;
  }, { legacy: "reject", onerror: () => {} });
}

/** A message as the tests read it (any shape: the assertions say which). */
// deno-lint-ignore no-explicit-any
type Message = Record<string, any>;

/** What the session would hear from the backend, taken in order by what is looked for. */
class Inbox {
  readonly messages: JSONRPCMessage[] = [];
  #waiters: (() => void)[] = [];

  push(message: JSONRPCMessage): void {
    this.messages.push(message);
    for (const wake of this.#waiters.splice(0)) wake();
  }

  async take(what: (message: Record<string, unknown>) => boolean): Promise<Message> {
    for (;;) {
      const at = this.messages.findIndex((m) => what(m as Record<string, unknown>));
      if (at >= 0) return this.messages.splice(at, 1)[0] as Message;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }
}

const answerTo = (id: unknown) => (m: Record<string, unknown>) => m.id === id && !("method" in m);
const request = (id: number, method: string, params?: Record<string, unknown>) =>
  ({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) }) as JSONRPCMessage;

/** Each listen the backend is asked for; `cut` ends the next one's stream after its first event. */
interface Listens {
  opened: number;
  cut: boolean;
}

/** The backend's answer to a listen, ended by "the network" right after its first event. */
function cutAfterFirstEvent(response: Response): Response {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  return new Response(
    new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { value, done } = await reader.read();
        if (done) return controller.close();
        controller.enqueue(value);
        seen += decoder.decode(value, { stream: true });
        if (seen.includes("\n\n")) {
          await reader.cancel();
          controller.close();
        }
      },
    }),
    { status: response.status, headers: response.headers },
  );
}

async function connected() {
  const handler = modernServer();
  const clock = testClock();
  clock.freeze();
  const listens: Listens = { opened: 0, cut: false };
  const logs: string[] = [];
  const wire = new HttpWire({
    url: new URL("http://127.0.0.1/mcp"),
    headers: {},
    fetch: async (input, init) => {
      const response = await handler.fetch(new Request(input as string | URL, init));
      if (!String(init?.body).includes('"subscriptions/listen"')) return response;
      listens.opened++;
      if (!listens.cut) return response;
      listens.cut = false;
      return cutAfterFirstEvent(response);
    },
    mask: new SecretMask(),
  });
  const backend = new ModernBackend({
    server: "unit",
    wire,
    clock,
    logger: createLogger("debug", (line) => logs.push(line)),
    timeoutMs: 5_000,
  });
  const inbox = new Inbox();
  backend.onmessage = (message) => inbox.push(message);
  await backend.send(request(0, "initialize", {
    protocolVersion: "2025-11-25",
    capabilities: { elicitation: {} },
    clientInfo: { name: "unit-client", version: "1" },
  }));
  const initialized = await inbox.take(answerTo(0));
  return {
    backend,
    inbox,
    initialized,
    handler,
    clock,
    listens,
    logs,
    close: async () => {
      await backend.close();
      await handler.close();
    },
  };
}

Deno.test("ModernBackend.send() answers initialize from server/discover, ping and logging/setLevel itself, and stamps the level on later calls", async () => {
  const { backend, inbox, initialized, close } = await connected();
  try {
    assert.deepEqual(initialized.result.serverInfo, { name: "unit-modern", version: "1.0.0" });
    assert.equal(initialized.result.protocolVersion, "2025-11-25");
    assert.deepEqual(initialized.result.capabilities.tools, { listChanged: true });
    await backend.send(request(1, "ping"));
    assert.deepEqual((await inbox.take(answerTo(1))).result, {});
    const envelope = async (id: number) => {
      await backend.send(request(id, "tools/call", { name: "envelope", arguments: {} }));
      return (await inbox.take(answerTo(id))).result.content[0].text;
    };
    assert.equal(await envelope(4), "unit-client at no level");
    await backend.send(request(2, "logging/setLevel", { level: "debug" }));
    assert.deepEqual((await inbox.take(answerTo(2))).result, {});
    assert.equal(await envelope(5), "unit-client at debug");
    await backend.send(request(3, "logging/setLevel", { level: "loud" }));
    assert.equal((await inbox.take(answerTo(3))).error.code, -32602);
  } finally {
    await close();
  }
});

Deno.test("ModernBackend.send() asks the client each round and gives up after MAX_INPUT_ROUNDS", async () => {
  const { backend, inbox, close } = await connected();
  try {
    await backend.send(request(7, "tools/call", { name: "always_asks", arguments: {} }));
    let asked = 0;
    for (;;) {
      const next = await inbox.take((m) => m.method === "elicitation/create" || answerTo(7)(m));
      if (next.method === undefined) {
        assert.equal(asked, MAX_INPUT_ROUNDS);
        assert.match(next.error.message, /still asked for input after 10 rounds of tools\/call/);
        break;
      }
      assert.ok(++asked <= MAX_INPUT_ROUNDS, `asked a ${asked}th time`);
      const answer = { jsonrpc: "2.0", id: next.id, result: { action: "accept", content: {} } };
      await backend.send(answer as JSONRPCMessage);
    }
  } finally {
    await close();
  }
});

Deno.test("ModernBackend.send() retries with the answer, and drops a call cancelled while it asks", async () => {
  const { backend, inbox, logs, close } = await connected();
  try {
    await backend.send(request(8, "tools/call", { name: "asks_once", arguments: {} }));
    const question = await inbox.take((m) => m.method === "elicitation/create");
    const accept = (id: unknown) =>
      ({
        jsonrpc: "2.0",
        id,
        result: { action: "accept", content: { ok: true } },
      }) as JSONRPCMessage;
    await backend.send(accept(question.id));
    const done = await inbox.take(answerTo(8));
    assert.deepEqual(done.result.content, [{ type: "text", text: "thanks" }]);

    await backend.send(request(9, "tools/call", { name: "asks_once", arguments: {} }));
    const again = await inbox.take((m) => m.method === "elicitation/create");
    await backend.send({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 9, reason: "the user gave up" },
    } as JSONRPCMessage);
    // The question went with its call: the late answer is no one's, and nothing is retried.
    await backend.send(accept(again.id));
    assert.ok(logs.some((line) => line.includes("dropped a client answer to no question")));
    await backend.send(request(10, "tools/call", { name: "asks_once", arguments: {} }));
    await backend.send(accept((await inbox.take((m) => m.method === "elicitation/create")).id));
    await inbox.take(answerTo(10));
    assert.equal(inbox.messages.find(answerTo(9)), undefined, "a cancelled call is not answered");
  } finally {
    await close();
  }
});

Deno.test("ModernBackend.send() subscribes through subscriptions/listen and passes updates on untagged", async () => {
  const { backend, inbox, handler, close } = await connected();
  try {
    await backend.send(request(11, "resources/subscribe", { uri: WATCHED }));
    assert.deepEqual((await inbox.take(answerTo(11))).result, {});
    handler.notify.resourceUpdated(WATCHED);
    const updated = await inbox.take((m) => m.method === "notifications/resources/updated");
    assert.deepEqual(updated.params, { uri: WATCHED });
    handler.notify.toolsChanged();
    await inbox.take((m) => m.method === "notifications/tools/list_changed");
    await backend.send(request(12, "resources/unsubscribe", { uri: WATCHED }));
    assert.deepEqual((await inbox.take(answerTo(12))).result, {});
  } finally {
    await close();
  }
});

Deno.test("ListenKeeper.subscribe() leaves a listen that opens again on the clock when the backend drops it", async () => {
  const { backend, inbox, handler, clock, listens, close } = await connected();
  try {
    listens.cut = true;
    await backend.send(request(13, "resources/subscribe", { uri: WATCHED }));
    assert.deepEqual((await inbox.take(answerTo(13))).result, {});
    assert.equal(listens.opened, 1);
    // Dropped after its acknowledgement: opened again after the pause, and not before.
    await waitUntil("the dropped listen to be noticed", () => clock.pending > 0);
    assert.equal(listens.opened, 1);
    clock.advance(1_000);
    await waitUntil("the listen to be opened again", () => listens.opened === 2);
    // Once acknowledged again, an update announced by the backend reaches the session.
    await waitUntil("an update through the reopened listen", () => {
      handler.notify.resourceUpdated(WATCHED);
      return inbox.messages.some((m) =>
        "method" in m && m.method === "notifications/resources/updated"
      );
    });
  } finally {
    await close();
  }
});
