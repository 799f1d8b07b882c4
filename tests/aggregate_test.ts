/**
 * Aggregate servers with real members over three transports (stdio, Streamable HTTP, SSE),
 * driven by the SDK client over both fronts.
 */
import assert from "node:assert/strict";
import { connectClient, type Front } from "./fixtures/client.ts";
import {
  type RunningFixture,
  startHttpFixture,
  startSseFixture,
} from "./fixtures/fixture_server.ts";
import { type TestClock, testClock } from "./fixtures/clock.ts";
import { FIXTURE_STDIO, startGateway, type TestGateway } from "./fixtures/gateway.ts";
import { INIT, mcpHeaders, post } from "./fixtures/raw.ts";
import { type Client, ToolListChangedNotificationSchema } from "./fixtures/sdk.ts";
import { waitUntil, within } from "./fixtures/waits.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const ALL = "aggregate-token-0123456789";
const MEMBER = "member-token-0123456789";

interface Setup {
  gw: TestGateway;
  /** The gateway's clock: cache expiry and member back-off are moved by the test. */
  clock: TestClock;
  web: RunningFixture;
  legacy: RunningFixture;
  close(): Promise<void>;
}

async function setup(cacheTtl = "60s"): Promise<Setup> {
  const clock = testClock();
  const web = await startHttpFixture();
  const legacy = await startSseFixture();
  const auth = `serviceAuths: [{ type: bearer, tokens: ["${MEMBER}"] }]`;
  const gw = await startGateway(
    `
baseUrl: http://127.0.0.1:{{PORT}}
limits: { requestTimeout: 20s }
servers:
  files:
    transport: stdio
    ${FIXTURE_STDIO}
    ${auth}
  web:
    transport: streamable-http
    url: ${web.url}
    ${auth}
  legacy:
    transport: sse
    url: ${legacy.url}
    ${auth}
  small:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts"]
    ${auth}
  all:
    transport: aggregate
    servers: [files, web, legacy]
    cacheTtl: ${cacheTtl}
    serviceAuths: [{ type: bearer, tokens: ["${ALL}"] }]
  tiny:
    transport: aggregate
    servers: [small]
    serviceAuths: [{ type: bearer, tokens: ["${ALL}"] }]
`,
    {},
    { clock },
  );
  return {
    gw,
    clock,
    web,
    legacy,
    close: async () => {
      await gw.close();
      await web.close();
      await legacy.close();
    },
  };
}

const textOf = (result: unknown) =>
  ((result as { content: { text?: string }[] }).content[0]?.text) ?? "";

for (const front of ["streamable", "sse"] as Front[]) {
  Deno.test(`aggregate over ${front}: namespaced lists with unchanged metadata, routed calls`, async () => {
    const s = await setup();
    let client: Client | undefined;
    let direct: Client | undefined;
    try {
      client = await connectClient(s.gw.url, "all", front, ALL);
      direct = await connectClient(s.gw.url, "web", "streamable", MEMBER);
      const { tools } = await client.listTools();
      const { tools: webTools } = await direct.listTools();
      for (const member of ["files", "web", "legacy"]) {
        for (const tool of webTools) {
          const found = tools.find((t) => t.name === `${member}.${tool.name}`);
          assert.ok(found, `${member}.${tool.name} is listed`);
          assert.deepEqual(
            { ...found, name: tool.name },
            tool,
            "everything but the name unchanged",
          );
        }
      }
      assert.equal(tools.length, webTools.length * 3);

      for (
        const [member, transport] of [["files", "stdio"], ["web", "streamable-http"], [
          "legacy",
          "sse",
        ]]
      ) {
        const result = await client.callTool({ name: `${member}.echo_environment`, arguments: {} });
        assert.equal(JSON.parse(textOf(result)).transport, transport, `${member} answered`);
      }

      const { prompts } = await client.listPrompts();
      assert.ok(prompts.some((p) => p.name === "legacy.test_prompt_with_arguments"));
      const prompt = await client.getPrompt({
        name: "web.test_prompt_with_arguments",
        arguments: { arg1: "a", arg2: "b" },
      });
      assert.ok(prompt.messages.length > 0);

      const { resources } = await client.listResources();
      assert.equal(
        resources.filter((r) => r.uri === "test://static-text").length,
        1,
        "a clash is listed once",
      );
      const read = await client.readResource({ uri: "test://static-text" });
      assert.equal(read.contents[0].uri, "test://static-text");
      const templated = await client.readResource({ uri: "test://template/42/data" });
      assert.ok(templated.contents.length > 0, "a template-made URI is routed by its template");

      const progress: number[] = [];
      await client.callTool(
        { name: "legacy.test_tool_with_progress", arguments: {} },
        undefined,
        { onprogress: (p) => progress.push(p.progress) },
      );
      assert.ok(progress.length >= 2, `progress arrived: ${progress}`);

      const sampled = await client.callTool({
        name: "files.test_sampling",
        arguments: { prompt: "hi" },
      });
      assert.match(textOf(sampled), /echo: hi/, "sampling went to the client and back to files");
      const elicited = await client.callTool({
        name: "web.test_elicitation",
        arguments: { message: "who?" },
      });
      assert.match(JSON.stringify(elicited), /ada/);

      const unknown = await client.callTool({ name: "nobody.tool", arguments: {} }).catch((e) => e);
      assert.match(
        String(unknown.message ?? JSON.stringify(unknown)),
        /unknown tool "nobody\.tool"/,
      );

      const caps = client.getServerCapabilities()!;
      assert.ok(caps.tools && caps.prompts && caps.resources && caps.logging && caps.completions);
    } finally {
      await client?.close();
      await direct?.close();
      await s.close();
    }
  });
}

Deno.test("aggregate: capabilities are the union of the members', nothing more", async () => {
  const s = await setup();
  try {
    const client = await connectClient(s.gw.url, "tiny", "streamable", ALL);
    const caps = client.getServerCapabilities()!;
    assert.ok(caps.tools);
    assert.equal(caps.prompts, undefined);
    assert.equal(caps.resources, undefined);
    assert.equal(caps.logging, undefined);
    const result = await client.callTool({ name: "small.echo", arguments: { x: 1 } });
    assert.equal(textOf(result), '{"x":1}');
    await client.close();
  } finally {
    await s.close();
  }
});

Deno.test("aggregate: its token opens only the aggregate, a member's token does not open it", async () => {
  const s = await setup();
  try {
    const memberAtAll = await post(
      `${s.gw.url}/all/mcp`,
      INIT,
      mcpHeaders({ authorization: `Bearer ${MEMBER}` }),
    );
    assert.equal(memberAtAll.status, 401);
    const allAtMember = await post(
      `${s.gw.url}/web/mcp`,
      INIT,
      mcpHeaders({ authorization: `Bearer ${ALL}` }),
    );
    assert.equal(allAtMember.status, 401);
  } finally {
    await s.close();
  }
});

Deno.test("aggregate: discoveries are cached and collapsed; list_changed invalidates and reaches the client", async () => {
  const s = await setup("60s");
  const clients: Client[] = [];
  try {
    const toolLists = () => s.web.methods.filter((m) => m === "tools/list").length;
    for (let i = 0; i < 3; i++) {
      clients.push(await connectClient(s.gw.url, "all", "streamable", ALL));
    }
    await Promise.all(clients.map((c) => c.listTools()));
    assert.equal(toolLists(), 1, "three sessions' concurrent lists made one discovery");
    await clients[0].listTools();
    assert.equal(toolLists(), 1, "within the TTL the cache answers");
    s.clock.advance(61_000); // past the TTL
    await clients[0].listTools();
    assert.equal(toolLists(), 2, "after the TTL the member is asked again");

    const changed = Promise.withResolvers<void>();
    clients[1].setNotificationHandler(ToolListChangedNotificationSchema, () => changed.resolve());
    await clients[0].callTool({ name: "web.announce_list_changed", arguments: {} });
    await within("notifications/tools/list_changed at the second client", changed.promise);
    await clients[1].listTools();
    assert.equal(toolLists(), 3, "list_changed dropped the cached list");
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    await s.close();
  }
});

Deno.test("aggregate: a member that dies costs its own calls only, and comes back without a restart", async () => {
  const s = await setup();
  try {
    const client = await connectClient(s.gw.url, "all", "streamable", ALL);
    await client.listTools();
    s.clock.freeze();
    const crash = await client.callTool({ name: "files.crash", arguments: {} }).catch((e) => e);
    assert.match(String(crash.message), /files/);
    const during = await client.callTool({ name: "files.echo_environment", arguments: {} })
      .catch((e) => e);
    assert.match(String(during.message), /the member "files" is unavailable/);
    const other = await client.callTool({ name: "web.echo_environment", arguments: {} });
    assert.equal(JSON.parse(textOf(other)).transport, "streamable-http");
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name.startsWith("web.")), "the others still list");

    s.clock.advance(2_200); // past the member's retry back-off
    const back = await client.callTool({ name: "files.echo_environment", arguments: {} });
    assert.equal(JSON.parse(textOf(back)).transport, "stdio", "a fresh files process answered");
    await client.close();
  } finally {
    await s.close();
  }
});

Deno.test("aggregate: a slow member is left out after a bounded wait; the rest answer", async () => {
  const gw = await startGateway(`
limits: { requestTimeout: 20s }
servers:
  small: { transport: stdio, command: deno, env: { ${DENO_DIR_YAML} }, args: [run, "${ROOT}tests/fixtures/minimal_server.ts"], public: true }
  slow: { transport: stdio, command: deno, env: { ${DENO_DIR_YAML} }, args: [run, "${ROOT}tests/fixtures/minimal_server.ts", "0", slow-list], public: true }
  both: { transport: aggregate, servers: [small, slow], public: true }
`);
  try {
    const client = await connectClient(gw.url, "both", "streamable");
    // The slow member never answers tools/list: a list at all shows the wait was bounded.
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ["small.echo", "small.pid"]);
    const call = await client.callTool({ name: "slow.echo", arguments: {} }).catch((e) => e);
    assert.match(
      String(call.message),
      // The member's own request timeout, or the list's guard around connecting and asking.
      /the member "slow" is unavailable: (slow did not answer tools\/list within 10s|listing slow took longer than 10\.05s)/,
    );
    assert.ok(gw.logs.some((line) => line.includes("aggregate member left out of a list")));
    await client.close();
  } finally {
    await gw.close();
  }
});

Deno.test("aggregate: completion, subscriptions, logging level and cancellation reach the member", async () => {
  const s = await setup();
  try {
    const client = await connectClient(s.gw.url, "all", "streamable", ALL);
    const completion = await client.complete({
      ref: { type: "ref/prompt", name: "web.test_prompt_with_arguments" },
      argument: { name: "arg1", value: "he" },
    });
    assert.deepEqual(completion.completion.values, ["hello", "help"]);
    await client.subscribeResource({ uri: "test://watched-resource" });
    await client.unsubscribeResource({ uri: "test://watched-resource" });
    await client.setLoggingLevel("debug");
    assert.ok(s.web.methods.includes("logging/setLevel"), "setLevel fanned out to web");

    const controller = new AbortController();
    const pending = client.callTool({ name: "web.sleep", arguments: { ms: 10_000 } }, undefined, {
      signal: controller.signal,
    }).catch((e) => e);
    // Cancel only once the member has the call, or there would be nothing to tell it.
    await waitUntil("the member to receive tools/call", () => s.web.methods.includes("tools/call"));
    controller.abort("changed my mind");
    await pending;
    await waitUntil(
      "notifications/cancelled to reach the member",
      () => s.web.methods.includes("notifications/cancelled"),
    );
    const after = await client.callTool({ name: "web.test_simple_text", arguments: {} });
    assert.ok(textOf(after).length > 0, "the session carries on");
    await client.close();
  } finally {
    await s.close();
  }
});
