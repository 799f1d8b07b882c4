/**
 * The aggregate with real MCP servers as members, in process (tests/fixtures/aggregate_members.ts),
 * its time a frozen test clock: nothing here waits for time to pass.
 */
import assert from "node:assert/strict";
import {
  aggregateOf,
  DISCOVERY_TIMEOUT_MS,
  drain,
  McpServer,
  member,
  RETRY_AFTER_MS,
  textOf,
  TTL_MS,
} from "../../../tests/fixtures/aggregate_members.ts";
import {
  CreateMessageRequestSchema,
  CreateMessageResultSchema,
  ListToolsRequestSchema,
  McpError,
  Server,
  ToolListChangedNotificationSchema,
} from "../../../tests/fixtures/sdk.ts";
import { within } from "../../../tests/fixtures/waits.ts";

Deno.test("AggregateTransport.send() answers lists with both members' tools, prompts and resources as member.name, in pages", async () => {
  // 1,001 tools each: more than one page of 2,000.
  const h = await aggregateOf({ a: () => member("a", 1_000), b: () => member("b", 1_000) });
  try {
    assert.equal(h.client.getServerVersion()?.name, "gatehouse/agg");
    const caps = h.client.getServerCapabilities()!;
    assert.ok(caps.tools && caps.prompts && caps.resources, "the members' capabilities united");
    assert.equal(
      h.client.getInstructions(),
      "a: use a for a things\n\nb: use b for b things",
    );

    const first = await h.client.listTools();
    assert.equal(first.tools.length, 2_000);
    assert.ok(first.nextCursor, "a second page is announced");
    const second = await h.client.listTools({ cursor: first.nextCursor });
    assert.equal(second.nextCursor, undefined);
    const names = [...first.tools, ...second.tools].map((t) => t.name);
    const expected = ["a", "b"].flatMap((m) => [
      `${m}.echo`,
      ...Array.from({ length: 1_000 }, (_, i) => `${m}.tool_${i}`),
    ]);
    assert.deepEqual(names, expected, "every tool once, namespaced, in member order");
    const echo = first.tools.find((t) => t.name === "a.echo")!;
    assert.equal(echo.description, "says which member answered", "only the name changes");

    const { prompts } = await h.client.listPrompts();
    assert.deepEqual(prompts.map((p) => p.name), ["a.greet", "b.greet"]);
    const { resources } = await h.client.listResources();
    assert.deepEqual(resources.map((r) => r.uri), ["a://readme", "b://readme"], "URIs kept");
    const { resourceTemplates } = await h.client.listResourceTemplates();
    assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate), [
      "a://items/{id}",
      "b://items/{id}",
    ]);

    const foreign = await h.client.listTools({ cursor: "not-ours" }).catch((e) => e);
    assert.ok(foreign instanceof McpError);
    assert.match(foreign.message, /the cursor is not one this aggregate gave out/);
  } finally {
    await h.close();
  }
});

Deno.test("AggregateTransport.send() routes a call to the member that listed it, under the member's own name", async () => {
  const h = await aggregateOf({ a: () => member("a"), b: () => member("b") });
  try {
    await h.client.listTools();
    // Each member knows only "echo": a member given "b.echo" would answer "not found".
    assert.equal(textOf(await h.client.callTool({ name: "b.echo", arguments: {} })), "b");
    assert.equal(textOf(await h.client.callTool({ name: "a.echo", arguments: {} })), "a");
    const prompt = await h.client.getPrompt({ name: "b.greet" });
    assert.deepEqual(prompt.messages[0].content, { type: "text", text: "hello from b" });
    const read = await h.client.readResource({ uri: "b://readme" });
    assert.equal((read.contents[0] as { text: string }).text, "b readme");
    const templated = await h.client.readResource({ uri: "a://items/7" });
    assert.equal((templated.contents[0] as { text: string }).text, "a item 7");
  } finally {
    await h.close();
  }
});

Deno.test("AggregateTransport.send() answers an error that says what to do when a namespaced tool is unknown", async () => {
  const h = await aggregateOf({ a: () => member("a") });
  try {
    const error = await h.client.callTool({ name: "nobody.tool", arguments: {} }).catch((e) => e);
    assert.ok(error instanceof McpError, `an error, not a result: ${JSON.stringify(error)}`);
    assert.equal(error.code, -32602);
    assert.match(
      error.message,
      /unknown tool "nobody\.tool": list them again, a member may be unavailable/,
    );
    const prompt = await h.client.getPrompt({ name: "a.nothing" }).catch((e) => e);
    assert.match(String(prompt.message), /unknown prompt "a\.nothing"/);
  } finally {
    await h.close();
  }
});

Deno.test("AggregateTransport.send() keeps a failed member out until the clock passes retryAfterMs, then connects it again", async () => {
  const h = await aggregateOf({ a: () => member("a"), b: () => member("b") });
  try {
    await h.client.listTools();
    await h.servers.get("b")!.close(); // b's connection ends: b is down as of now
    await drain();
    const down = await h.client.callTool({ name: "b.echo", arguments: {} }).catch((e) => e);
    assert.match(
      String(down.message),
      /the member "b" is unavailable: its connection closed; it is retried shortly/,
    );
    assert.equal(textOf(await h.client.callTool({ name: "a.echo", arguments: {} })), "a");

    h.clock.advance(RETRY_AFTER_MS - 1);
    const still = await h.client.callTool({ name: "b.echo", arguments: {} }).catch((e) => e);
    assert.match(String(still.message), /the member "b" is unavailable/);
    assert.equal(h.connects.get("b"), 1, "not tried again within the back-off");

    h.clock.advance(1);
    assert.equal(textOf(await h.client.callTool({ name: "b.echo", arguments: {} })), "b");
    assert.equal(h.connects.get("b"), 2, "connected again once the back-off passed");
    assert.ok(h.logs.some((line) => line.includes("aggregate member is back")));
  } finally {
    await h.close();
  }
});

Deno.test("AggregateTransport.send() asks a member for its list again exactly when the cache's TTL has passed", async () => {
  const h = await aggregateOf({ a: () => member("a") });
  const asked = () => h.sent.get("a")!.filter((m) => m === "tools/list").length;
  try {
    await h.client.listTools();
    assert.equal(asked(), 1);
    h.clock.advance(TTL_MS - 1);
    await h.client.listTools();
    assert.equal(asked(), 1, "within the TTL the cache answers");
    h.clock.advance(1);
    await h.client.listTools();
    assert.equal(asked(), 2, "at the TTL the member is asked again");
  } finally {
    await h.close();
  }
});

Deno.test("AggregateTransport.send() leaves a member out of a list when the clock passes its request timeout", async () => {
  let entered = Promise.withResolvers<void>();
  let aborted = false;
  const slow = () => {
    const server = new Server({ name: "slow", version: "1.0.0" }, {
      capabilities: { tools: {} },
    });
    server.setRequestHandler(ListToolsRequestSchema, (_request, extra) => {
      entered.resolve();
      return new Promise((_, reject) => {
        extra.signal.addEventListener("abort", () => {
          aborted = true;
          reject(new Error("cancelled"));
        });
      });
    });
    return server;
  };
  const h = await aggregateOf({ a: () => member("a"), slow });
  try {
    // Settles either way, so a failed assertion below is not hidden by an unhandled rejection.
    const listing = h.client.listTools().catch((error: Error) => error);
    let settled = false;
    void listing.then(() => settled = true);
    await within("the slow member to be asked for its tools", entered.promise);
    h.clock.advance(DISCOVERY_TIMEOUT_MS - 1);
    await drain();
    assert.equal(settled, false, "the timeout has not passed yet");
    assert.equal(aborted, false);
    // Deadlines fire within one resolution step (50 ms) after they are due, never before.
    h.clock.advance(50);
    await drain();
    assert.ok(settled, "the timeout fired as the clock passed it, with no real time gone by");
    const listed = await listing;
    assert.ok(!(listed instanceof Error), `listed: ${listed}`);
    assert.deepEqual(listed.tools.map((t) => t.name), ["a.echo"]);
    assert.ok(aborted, "the member was told the request was cancelled");

    // An unknown name lists again, so the slow member is asked (and waited for) once more.
    entered = Promise.withResolvers<void>();
    const calling = h.client.callTool({ name: "slow.echo", arguments: {} }).catch((e) => e);
    await within("the slow member to be asked again", entered.promise);
    let answered = false;
    void calling.then(() => answered = true);
    h.clock.advance(DISCOVERY_TIMEOUT_MS + 49);
    await drain();
    assert.ok(answered, "answered as the clock passed the timeout");
    const call = await calling;
    assert.match(
      String(call.message),
      /the member "slow" is unavailable: slow did not answer tools\/list within 10s/,
    );
  } finally {
    await h.close();
  }
});

Deno.test("AggregateTransport.onmessage gets tools/list_changed when a member's tools change", async () => {
  const h = await aggregateOf({ a: () => member("a"), b: () => member("b") });
  try {
    await h.client.listTools();
    const changed = Promise.withResolvers<void>();
    h.client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed.resolve());
    (h.servers.get("b") as McpServer).registerTool("late", {}, () => ({ content: [] }));
    await within("notifications/tools/list_changed at the client", changed.promise);
    const { tools } = await h.client.listTools();
    assert.ok(tools.some((t) => t.name === "b.late"), "the stale list was dropped");
  } finally {
    await h.close();
  }
});

Deno.test("AggregateTransport.onmessage carries a member's sampling request, and send() the answer back", async () => {
  const asking = () => {
    const server = member("a");
    server.registerTool("ask", {}, async (extra) => {
      const answer = await extra.sendRequest({
        method: "sampling/createMessage",
        params: { messages: [], maxTokens: 10 },
      }, CreateMessageResultSchema);
      return { content: [{ type: "text", text: JSON.stringify(answer.content) }] };
    });
    return server;
  };
  const h = await aggregateOf({ a: asking });
  try {
    h.client.setRequestHandler(CreateMessageRequestSchema, () => ({
      role: "assistant",
      model: "m",
      content: { type: "text", text: "sampled" },
    }));
    const result = await h.client.callTool({ name: "a.ask", arguments: {} });
    assert.equal(textOf(result), JSON.stringify({ type: "text", text: "sampled" }));
  } finally {
    await h.close();
  }
});

Deno.test("AggregateTransport.send() passes the client's cancellation on when the member has the call", async () => {
  const started = Promise.withResolvers<void>();
  const stopped = Promise.withResolvers<void>();
  const waiting = () => {
    const server = member("a");
    server.registerTool("wait", {}, (extra) =>
      new Promise((resolve) => {
        started.resolve();
        extra.signal.addEventListener("abort", () => {
          stopped.resolve();
          resolve({ content: [] });
        });
      }));
    return server;
  };
  const h = await aggregateOf({ a: waiting });
  try {
    const controller = new AbortController();
    const call = h.client.callTool({ name: "a.wait", arguments: {} }, undefined, {
      signal: controller.signal,
    }).catch((e) => e);
    await within("the member to start the call", started.promise);
    controller.abort("changed my mind");
    await within("the member's handler to be aborted", stopped.promise);
    assert.match(String((await call).message), /changed my mind|abort/i);
    assert.equal(textOf(await h.client.callTool({ name: "a.echo", arguments: {} })), "a");
  } finally {
    await h.close();
  }
});
