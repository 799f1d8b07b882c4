/**
 * The official SDK client drives the gateway over both front transports against the fixture
 * server on each backend transport: every message kind, both ways, payloads unchanged.
 */
import assert from "node:assert/strict";
import { connectClient, type Front } from "./fixtures/client.ts";
import { startHttpFixture, startSseFixture } from "./fixtures/fixture_server.ts";
import { fixtureStdio, startGateway } from "./fixtures/gateway.ts";
import { LoggingMessageNotificationSchema } from "./fixtures/sdk.ts";
import { waitUntil } from "./fixtures/waits.ts";

const TOKEN = "matrix-token-0123456789";
const GATEWAY_SECRET_ENV = "GATEHOUSE_MATRIX_SECRET";

Deno.test("proxy matrix: 2 fronts × 3 backends", async (t) => {
  // A secret in the gateway's own environment that no backend may ever see.
  Deno.env.set(GATEWAY_SECRET_ENV, "must-not-leak");
  const http = await startHttpFixture();
  const sse = await startSseFixture();
  const gw = await startGateway(`
baseUrl: http://127.0.0.1:{{PORT}}
storage: ":memory:"
servers:
  stdio:
    transport: stdio
    ${fixtureStdio({ FIXTURE_USER: "{{user.id}}" })}
    serviceAuths: [{ type: bearer, tokens: ["${TOKEN}"] }]
  http:
    transport: streamable-http
    url: ${http.url}
    headers: { X-Backend-Key: backend-only, X-User: "{{user.id}}" }
    serviceAuths: [{ type: bearer, tokens: ["${TOKEN}"] }]
  sse:
    transport: sse
    url: ${sse.url}
    headers: { X-Backend-Key: backend-only }
    serviceAuths: [{ type: bearer, tokens: ["${TOKEN}"] }]
`);
  try {
    for (const backend of ["stdio", "http", "sse"]) {
      for (const front of ["streamable", "sse"] as Front[]) {
        await t.step(`${front} front → ${backend} backend`, async () => {
          const client = await connectClient(gw.url, backend, front, TOKEN);
          try {
            await exercise(client, backend);
          } finally {
            await client.close();
          }
        });
      }
    }
  } finally {
    Deno.env.delete(GATEWAY_SECRET_ENV);
    await gw.close();
    await http.close();
    await sse.close();
  }
});

async function exercise(client: Awaited<ReturnType<typeof connectClient>>, backend: string) {
  assert.equal(client.getServerVersion()?.name, "gatehouse-fixture");
  assert.equal(client.getServerCapabilities()?.tasks, undefined, "tasks are not advertised");

  const { tools } = await client.listTools();
  const echo = tools.find((tool) => tool.name === "echo_environment")!;
  assert.deepEqual(echo.annotations, { readOnlyHint: true, title: "Echo" });
  assert.deepEqual(echo.icons, [{ src: "https://example.com/icon.png", mimeType: "image/png" }]);
  assert.deepEqual(echo._meta, { "example.com/custom": { kept: true } });
  const schema = tools.find((tool) => tool.name === "json_schema_2020_12_tool")!.inputSchema;
  assert.equal(schema.$schema, "https://json-schema.org/draft/2020-12/schema");
  assert.ok(schema.$defs);

  const simple = await client.callTool({ name: "test_simple_text" });
  assert.deepEqual(simple.content, [{
    type: "text",
    text: "This is a simple text response for testing.",
  }]);

  // Recorded at the transport: the SDK client runs notification handlers a tick late, so one
  // that arrives with the response can miss its `onprogress`; what the gateway owes is delivery.
  const progress: number[] = [];
  const transport = client.transport!;
  const handle = transport.onmessage!;
  transport.onmessage = (message, extra) => {
    if ("method" in message && message.method === "notifications/progress") {
      progress.push(Number(message.params?.progress));
    }
    handle(message, extra);
  };
  let reported = 0;
  await client.callTool({ name: "test_tool_with_progress" }, undefined, {
    onprogress: () => reported++,
  });
  assert.deepEqual(progress, [0, 50, 100]);
  assert.ok(reported >= 2, "progress reaches the caller's onprogress");

  const logs: string[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logs.push(String(n.params.data));
  });
  await client.setLoggingLevel("info");
  await client.callTool({ name: "test_tool_with_logging" });
  // The SDK runs notification handlers a tick after the message; the answer may come first.
  await waitUntil("three log notifications", () => logs.length >= 3);
  assert.deepEqual(logs, [
    "Tool execution started",
    "Tool processing data",
    "Tool execution completed",
  ]);

  const sampled = await client.callTool({ name: "test_sampling", arguments: { prompt: "hi" } });
  assert.deepEqual(sampled.content, [{ type: "text", text: "LLM response: echo: hi" }]);

  const elicited = await client.callTool({
    name: "test_elicitation",
    arguments: { message: "who?" },
  });
  assert.match(JSON.stringify(elicited.content), /action=accept.*ada@example\.com/);

  assert.equal((await client.ping()) !== undefined, true);
  const resource = await client.readResource({ uri: "test://template/42/data" });
  assert.match(JSON.stringify(resource.contents[0]), /\\"id\\":\\"42\\"/);
  const prompt = await client.getPrompt({
    name: "test_prompt_with_arguments",
    arguments: { arg1: "hello", arg2: "world" },
  });
  assert.equal(
    (prompt.messages[0].content as { text: string }).text,
    "Prompt with arguments: arg1='hello', arg2='world'",
  );
  const completion = await client.complete({
    ref: { type: "ref/prompt", name: "test_prompt_with_arguments" },
    argument: { name: "arg1", value: "hel" },
  });
  assert.deepEqual(completion.completion.values, ["hello", "help"]);

  const echoed = await client.callTool({ name: "echo_environment" });
  assert.deepEqual(echoed._meta, { "example.com/trace": "passed-through" });
  const seen = echoed.structuredContent as {
    env: Record<string, string>;
    headers: Record<string, string>;
  };
  const headerText = JSON.stringify(seen.headers).toLowerCase();
  assert.ok(!headerText.includes(TOKEN), "the client's token never reaches a backend");
  if (backend === "stdio") {
    assert.equal(seen.env[GATEWAY_SECRET_ENV], undefined, "the gateway's environment stays out");
    assert.deepEqual(
      Object.keys(seen.env).filter((k) => !["PATH", "HOME", "LANG"].includes(k)).sort(),
      ["DENO_DIR", "FIXTURE_USER"],
      "a stdio child gets PATH, HOME, LANG and its configured env only (the test's cache too)",
    );
    assert.match(seen.env.FIXTURE_USER, /^token:[0-9a-f]{12}$/);
  } else {
    assert.equal(seen.headers["x-backend-key"], "backend-only");
    assert.equal(seen.headers.authorization, undefined);
  }
  if (backend === "http") assert.match(seen.headers["x-user"], /^token:[0-9a-f]{12}$/);
}
