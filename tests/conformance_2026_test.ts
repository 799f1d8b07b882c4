/**
 * The direct baselines for MCP 2026-07-28 work: the official conformance suite 0.2.0-alpha.12
 * against the 2026-only fixture (v2 SDK, `legacy: 'reject'`) with `--requirements 2026-07-28`,
 * and against the 2025-only fixture (v1 SDK) with `--requirements 2025-11-25`, each fixture a
 * process of its own, with no gateway in between. The scenarios that pass here are what the
 * gateway must pass too; each test asserts the passing set equals its recorded list, so a
 * scenario that stops passing (or starts) fails the test until the list is updated on purpose.
 *
 * Then the v2 SDK client helper (`fixtures/v2_client.ts`) against the fixtures: pinned to
 * 2026-07-28, on `auto`, and on `legacy`, over HTTP with a bearer token, and over stdio.
 */
import assert from "node:assert/strict";
import {
  SCORED_2025,
  SCORED_2026,
  UNSCORED_PASSING_2025,
  UNSCORED_PASSING_2026,
} from "./fixtures/conformance_baselines.ts";
import { SdkError, SdkErrorCode, SdkHttpError } from "@modelcontextprotocol/client";
import { StdioClientTransport as V2StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import {
  describeRun,
  passing,
  type Requirements,
  runConformance,
  showRun,
  type SuiteRun,
} from "./fixtures/conformance_run.ts";
import { INPUT_KEY_META } from "./fixtures/everything_content.ts";
import { fixtureCommand, spawnFixture } from "./fixtures/fixture_process.ts";
import { startLegacyFixture } from "./fixtures/legacy_everything_server.ts";
import { startModernFixture } from "./fixtures/modern_server.ts";
import {
  Client as V1Client,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  SSEClientTransport,
  StdioClientTransport,
} from "./fixtures/sdk.ts";
import { connectV2Client, newV2Client, PINNED_VERSION } from "./fixtures/v2_client.ts";
import { waitUntil, within } from "./fixtures/waits.ts";

async function baseline(
  script: string,
  requirements: Requirements,
  expected: { scored: string[]; unscored: string[] },
): Promise<SuiteRun> {
  const fixture = await spawnFixture(script);
  try {
    const run = await runConformance(fixture.url, requirements);
    showRun(`conformance ${requirements}, ${script} directly`, run);
    const scored = [...run.results].filter(([, r]) => r.scored).map(([name]) => name).sort();
    const problems = [...run.results].filter(([, r]) => r.problems.length)
      .map(([name, r]) => `${name}: ${r.problems.join("; ")}`).join("\n");
    assert.deepEqual(scored, expected.scored, `the scored set changed:\n${run.output}`);
    assert.deepEqual(
      passing(run, true),
      expected.scored,
      `scored scenarios fail:\n${problems}\n${describeRun(run)}`,
    );
    assert.deepEqual(passing(run, false), expected.unscored, `unscored results:\n${problems}`);
    return run;
  } finally {
    await fixture.close();
  }
}

Deno.test("the 2026-only fixture passes every scored 2026-07-28 conformance scenario directly", async () => {
  const run = await baseline("modern_server.ts", "2026-07-28", {
    scored: SCORED_2026,
    unscored: UNSCORED_PASSING_2026,
  });
  const tasks = [...run.results.keys()].filter((name) => name.startsWith("tasks-"));
  assert.equal(tasks.length, 10, "the tasks extension's scenarios run, unscored");
});

Deno.test("the 2025-only fixture passes every scored 2025-11-25 conformance scenario directly", async () => {
  const run = await baseline("legacy_everything_server.ts", "2025-11-25", {
    scored: SCORED_2025,
    unscored: UNSCORED_PASSING_2025,
  });
  const polling = run.results.get("server-sse-polling");
  assert.deepEqual([polling?.failed, polling?.warnings], [0, 2], JSON.stringify(polling));
});

Deno.test("the v2 client pinned to 2026-07-28 lists, calls and listens on the 2026-only fixture, with its bearer token", async () => {
  const fixture = await startModernFixture();
  // A recording hop in front of the fixture, to see the header the client sent.
  const authorizations: (string | null)[] = [];
  const hop = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    authorizations.push(request.headers.get("authorization"));
    const { method, headers, body } = request;
    return fetch(fixture.url, { method, headers, body });
  });
  const url = `http://127.0.0.1:${hop.addr.port}/mcp`;
  let connected: Awaited<ReturnType<typeof connectV2Client>> | undefined;
  try {
    connected = await connectV2Client(url, { negotiation: "pinned", token: "t0k3n" });
    const { client, answered } = connected;
    assert.equal(client.getNegotiatedProtocolVersion(), PINNED_VERSION);
    assert.equal(client.getProtocolEra(), "modern");

    const { tools } = await within("tools/list", client.listTools());
    const names = tools.map((tool) => tool.name);
    assert.ok(names.includes("test_input_required_result_multiple_inputs"), names.join());
    assert.ok(!names.includes("test_dynamic_tool"), "listed only once toggled on");

    const simple = await within(
      "a plain tools/call",
      client.callTool({ name: "test_simple_text" }),
    );
    assert.deepEqual(simple.content, [{
      type: "text",
      text: "This is a simple text response for testing.",
    }]);
    // input_required with three requests and sealed state; the client answers and retries.
    const multiple = await within(
      "an input_required tools/call",
      client.callTool({ name: "test_input_required_result_multiple_inputs" }),
    );
    assert.deepEqual(multiple.content, [{
      type: "text",
      text: "echo: Generate a greeting name-value — 1 root(s) visible",
    }]);
    assert.deepEqual(answered.sort(), [
      "elicitation/create",
      "roots/list",
      "sampling/createMessage",
    ]);

    // List changes reach a subscriptions/listen stream (the SDK tags them with its id).
    let changes = 0;
    client.setNotificationHandler("notifications/tools/list_changed", () => void changes++);
    const listening = await within(
      "subscriptions/listen",
      client.listen({ toolsListChanged: true, promptsListChanged: true }),
    );
    await within("the trigger", client.callTool({ name: "test_trigger_tool_change" }));
    await waitUntil("tools/list_changed on the listen stream", () => changes === 1);
    await within("the listen stream to close", listening.close());
    const { tools: now } = await within("tools/list again", client.listTools());
    assert.ok(now.some((tool) => tool.name === "test_dynamic_tool"), "the toggled tool is listed");

    assert.ok(authorizations.length >= 3, `requests seen: ${authorizations.length}`);
    assert.ok(authorizations.every((value) => value === "Bearer t0k3n"), authorizations.join());
  } finally {
    await connected?.close();
    await within("the recording hop to stop", hop.shutdown());
    await fixture.close();
  }
});

Deno.test("the v2 client on auto picks 2026-07-28 from the 2026-only fixture and 2025-11-25 from the 2025-only one", async () => {
  const modern = await startModernFixture();
  const legacy = await startLegacyFixture();
  const clients: Awaited<ReturnType<typeof connectV2Client>>[] = [];
  try {
    const toModern = await connectV2Client(modern.url, { negotiation: "auto" });
    clients.push(toModern);
    assert.equal(toModern.client.getNegotiatedProtocolVersion(), "2026-07-28");
    assert.equal(toModern.client.getProtocolEra(), "modern");

    const toLegacy = await connectV2Client(legacy.url, { negotiation: "auto" });
    clients.push(toLegacy);
    assert.equal(toLegacy.client.getNegotiatedProtocolVersion(), "2025-11-25");
    assert.equal(toLegacy.client.getProtocolEra(), "legacy");
    // The 2025 fixture asks the client itself, inside the call.
    const result = await within(
      "a 2025 tools/call that elicits",
      toLegacy.client.callTool({ name: "test_input_required_result_elicitation" }),
    );
    assert.deepEqual(result.content, [{ type: "text", text: "Hello, name-value!" }]);
    assert.deepEqual(toLegacy.answered, ["elicitation/create"]);
  } finally {
    for (const connected of clients) await connected.close();
    await legacy.close();
    await modern.close();
  }
});

Deno.test("the v2 client on legacy negotiation is refused by the 2026-only fixture with -32022", async () => {
  const fixture = await startModernFixture();
  try {
    const error = await connectV2Client(fixture.url, { negotiation: "legacy" }).then(
      () => assert.fail("a 2025 initialize was served by the 2026-only fixture"),
      (error: unknown) => error,
    );
    // SDK 2.4.0 surfaces the 400 answer to `initialize` as an SdkHttpError carrying the body.
    assert.ok(error instanceof SdkHttpError, String(error));
    assert.equal(error.data?.status, 400);
    const body = JSON.parse(String(error.data?.text));
    assert.deepEqual(body.error, {
      code: -32022,
      message: "Unsupported protocol version: 2025-11-25",
      data: { supported: ["2026-07-28"], requested: "2025-11-25" },
    });

    // And a client pinned to 2026 cannot reach the 2025-only fixture: no fallback.
    const legacy = await startLegacyFixture();
    try {
      const pinned = await connectV2Client(legacy.url, { negotiation: "pinned" }).then(
        () => assert.fail("a pinned client connected to a 2025-only server"),
        (error: unknown) => error,
      );
      assert.ok(pinned instanceof SdkError, String(pinned));
      assert.equal(pinned.code, SdkErrorCode.EraNegotiationFailed, String(pinned));
    } finally {
      await legacy.close();
    }
  } finally {
    await fixture.close();
  }
});

Deno.test("the 2026-only fixture over stdio serves a pinned v2 client, announces its tool change on a listen stream, and refuses a 2025 initialize", async () => {
  const [command, ...args] = ["deno", ...fixtureCommand("modern_server.ts", ["--stdio"])];
  const { client } = newV2Client({ negotiation: "pinned" });
  let changes = 0;
  client.setNotificationHandler("notifications/tools/list_changed", () => void changes++);
  try {
    const transport = new V2StdioClientTransport({ command, args, stderr: "pipe" });
    await within("the v2 client to connect over stdio", client.connect(transport));
    assert.equal(client.getNegotiatedProtocolVersion(), PINNED_VERSION);
    const before = await within("tools/list over stdio", client.listTools());
    assert.ok(!before.tools.some((tool) => tool.name === "test_dynamic_tool"));
    const listening = await within(
      "subscriptions/listen over stdio",
      client.listen({ toolsListChanged: true }),
    );
    assert.deepEqual(listening.honoredFilter, { toolsListChanged: true });
    await within(
      "the trigger",
      client.callTool({ name: "test_trigger_tool_change", arguments: {} }),
    );
    await waitUntil("tools/list_changed on the listen stream", () => changes === 1);
    await within("the listen stream to close", listening.close());
    const after = await within(
      "tools/list again",
      client.listTools(undefined, { cacheMode: "refresh" }),
    );
    assert.ok(
      after.tools.some((tool) => tool.name === "test_dynamic_tool"),
      "the toggled tool is listed",
    );
  } finally {
    await within("the stdio client to close", client.close());
  }

  const v1 = new V1Client({ name: "gatehouse-test-v1", version: "1.0.0" });
  try {
    const error = await within(
      "a 2025 initialize over stdio",
      v1.connect(new StdioClientTransport({ command, args, stderr: "pipe" })).then(
        () => assert.fail("the 2026-only fixture served a 2025 client over stdio"),
        (error: unknown) => error as { code?: number; message: string },
      ),
    );
    assert.equal(error.code, -32022, error.message);
  } finally {
    await within("the v1 stdio client to close", v1.close());
  }
});

Deno.test("the 2025-only fixture over stdio asks the client itself, naming the 2026 input key", async () => {
  const [command, ...args] = [
    "deno",
    ...fixtureCommand("legacy_everything_server.ts", ["--stdio"]),
  ];
  const client = new V1Client(
    { name: "gatehouse-test-v1", version: "1.0.0" },
    { capabilities: { elicitation: {} } },
  );
  const keys: unknown[] = [];
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    keys.push(request.params._meta?.[INPUT_KEY_META]);
    return { action: "accept", content: { name: "Ada" } };
  });
  try {
    await within(
      "the v1 client to connect over stdio",
      client.connect(new StdioClientTransport({ command, args, stderr: "pipe" })),
    );
    const result = await within(
      "a call that elicits",
      client.callTool({ name: "test_input_required_result_elicitation", arguments: {} }),
    );
    assert.deepEqual(result.content, [{ type: "text", text: "Hello, Ada!" }]);
    assert.deepEqual(keys, ["user_name"]);
  } finally {
    await within("the v1 stdio client to close", client.close());
  }
});

Deno.test("the 2025-only fixture also serves the HTTP+SSE transport, asking the client inside the call", async () => {
  const fixture = await spawnFixture("legacy_everything_server.ts", ["--sse"]);
  const client = new V1Client(
    { name: "gatehouse-test-v1", version: "1.0.0" },
    { capabilities: { sampling: {} } },
  );
  client.setRequestHandler(CreateMessageRequestSchema, (request) => ({
    model: "test-model",
    role: "assistant",
    content: { type: "text", text: `Paris (${request.params._meta?.[INPUT_KEY_META]})` },
  }));
  try {
    assert.match(fixture.url, /\/sse$/);
    await within(
      "the v1 client to connect over SSE",
      client.connect(new SSEClientTransport(new URL(fixture.url))),
    );
    const result = await within(
      "a call that samples",
      client.callTool({ name: "test_input_required_result_sampling", arguments: {} }),
    );
    assert.deepEqual(result.content, [{
      type: "text",
      text: "Sampling response: Paris (capital_question)",
    }]);
  } finally {
    await within("the v1 SSE client to close", client.close());
    await fixture.close();
  }
});
