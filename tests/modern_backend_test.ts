/**
 * Backends that speak only MCP 2026-07-28 (the v2 SDK fixture with `legacy: 'reject'`), over
 * stdio and Streamable HTTP, behind the gateway, reached by a 2025-11-25 client (the v1 SDK
 * client): its session stays at the gateway, `initialize` is answered from `server/discover`,
 * each call goes out with the session's `_meta`, an `input_required` answer reaches the client
 * as elicitation requests and the call is retried with its answers, resource subscriptions
 * and list changes come through a backend `subscriptions/listen`, `ping` and
 * `logging/setLevel` are answered by the gateway. Both with `protocol: 2026-07-28` and with
 * `protocol: auto` (which learns it); a 2025 backend under `auto` behaves as before; a wrong
 * setting is refused in words that name the backend and what it speaks.
 */
import assert from "node:assert/strict";
import { done, WATCHED } from "./fixtures/everything_content.ts";
import { testClock } from "./fixtures/clock.ts";
import { fixtureCommand } from "./fixtures/fixture_process.ts";
import { startGateway, type TestGateway } from "./fixtures/gateway.ts";
import { startLegacyFixture } from "./fixtures/legacy_everything_server.ts";
import { openKvStore } from "../src/store/kv.ts";
import { mcpHeaders, openSession, post } from "./fixtures/raw.ts";
import { startModernFixture } from "./fixtures/modern_server.ts";
import {
  Client,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  ResourceUpdatedNotificationSchema,
  StreamableHTTPClientTransport,
  ToolListChangedNotificationSchema,
} from "./fixtures/sdk.ts";
import { waitUntil, within } from "./fixtures/waits.ts";
import { stdioEnvYaml } from "./fixtures/deno_dir.ts";

const MODERN_STDIO = `command: deno
    args: ${JSON.stringify(fixtureCommand("modern_server.ts", ["--stdio"]))}
    env: ${stdioEnvYaml()}`;
const SILENT_STDIO = `command: deno
    args: [run, "${new URL("./fixtures/bad_backend.ts", import.meta.url).pathname}", none]
    env: ${stdioEnvYaml()}`;
const LEGACY_STDIO = `command: deno
    args: ${JSON.stringify(fixtureCommand("legacy_everything_server.ts", ["--stdio"]))}
    env: ${stdioEnvYaml()}`;

interface V1 {
  client: Client;
  /** What the backend asked the client, in order (method and the form's first field). */
  asked: string[];
  updated: string[];
  toolsChanged: number;
  close(): Promise<void>;
}

/** The v1 SDK client (2025-11-25) on the gateway's Streamable HTTP front. */
async function connectV1(gw: TestGateway, server: string): Promise<V1> {
  const client = new Client(
    { name: "gatehouse-test-v1", version: "1.0.0" },
    { capabilities: { elicitation: {}, sampling: {}, roots: {} } },
  );
  const seen: V1 = {
    client,
    asked: [],
    updated: [],
    toolsChanged: 0,
    close: () => within(`the v1 client of ${server} to close`, client.close()),
  };
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    const params = request.params as { requestedSchema?: { properties?: object } };
    const field = Object.keys(params.requestedSchema?.properties ?? {})[0];
    seen.asked.push(`elicitation/create ${field}`);
    const value = field === "ok" ? true : field === "color" ? "teal" : "Ada";
    return { action: "accept", content: { [field]: value } };
  });
  client.setRequestHandler(CreateMessageRequestSchema, () => {
    seen.asked.push("sampling/createMessage");
    return { model: "m", role: "assistant", content: { type: "text", text: "Paris" } };
  });
  client.setRequestHandler(ListRootsRequestSchema, () => {
    seen.asked.push("roots/list");
    return { roots: [{ uri: "file:///work", name: "work" }] };
  });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    seen.updated.push(notification.params.uri);
  });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    seen.toolsChanged++;
  });
  const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/${server}/mcp`));
  await within(`the v1 client to connect to ${server}`, client.connect(transport));
  return seen;
}

function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((item) => item.text ?? "").join("");
}

function gatewayYaml(servers: Record<string, string>): string {
  const entries = Object.entries(servers).map(([name, body]) =>
    `  ${name}:\n    public: true\n    ${body.trim()}`
  );
  return `servers:\n${entries.join("\n")}\n`;
}

/** Everything a 2025 client does, through the gateway, against the 2026-only fixture. */
async function exercise(gw: TestGateway, server: string, http: boolean): Promise<void> {
  const v1 = await connectV1(gw, server);
  try {
    const { client } = v1;
    assert.equal(client.getServerVersion()?.name, "gatehouse-modern-fixture");
    assert.deepEqual(client.getServerCapabilities()?.tools, { listChanged: true });
    await within("ping", client.ping());
    await within("logging/setLevel", client.setLoggingLevel("debug"));

    const { tools } = await within("tools/list", client.listTools());
    assert.ok(tools.some((tool) => tool.name === "test_simple_text"), "tools are listed");
    const simple = await within("a simple call", client.callTool({ name: "test_simple_text" }));
    assert.match(textOf(simple), /simple text/i);

    // input_required: the client is asked through its own elicitation handler, then the call
    // is retried with the answer; and again for a tool that asks twice.
    const hello = await within(
      "a call that asks the client",
      client.callTool({ name: "test_input_required_result_elicitation" }),
    );
    assert.equal(textOf(hello), done.hello("Ada"));
    const twice = await within(
      "a call that asks twice",
      client.callTool({ name: "test_input_required_result_multi_round" }),
    );
    assert.equal(textOf(twice), done.multiRound("Ada", "teal"));
    const many = await within(
      "a call that asks three things at once",
      client.callTool({ name: "test_input_required_result_multiple_inputs" }),
    );
    assert.match(textOf(many), /Ada — 1 root\(s\) visible/);
    assert.deepEqual(v1.asked, [
      "elicitation/create name",
      "elicitation/create name",
      "elicitation/create color",
      "elicitation/create name",
      "sampling/createMessage",
      "roots/list",
    ]);

    // Subscriptions and list changes through the backend's subscriptions/listen.
    await within("resources/subscribe", client.subscribeResource({ uri: WATCHED }));
    await within(
      "the update trigger",
      client.callTool({ name: "test_trigger_resource_update" }),
    );
    await waitUntil("notifications/resources/updated", () => v1.updated.length === 1);
    assert.deepEqual(v1.updated, [WATCHED]);
    await within("the tool change trigger", client.callTool({ name: "test_trigger_tool_change" }));
    await waitUntil("notifications/tools/list_changed", () => v1.toolsChanged >= 1);
    await within("resources/unsubscribe", client.unsubscribeResource({ uri: WATCHED }));

    if (http) {
      // A tool whose argument must be mirrored into an Mcp-Param-* header (2026 over HTTP).
      const region = await within(
        "a call with an x-mcp-header argument",
        client.callTool({ name: "test_x_mcp_header", arguments: { region: "eu-west" } }),
      );
      assert.equal(textOf(region), "region=eu-west");
    }
  } finally {
    await v1.close();
  }
}

for (const protocol of ["2026-07-28", "auto"]) {
  Deno.test(`a 2025 client uses a 2026-only stdio backend (protocol: ${protocol})`, async () => {
    const gw = await startGateway(
      gatewayYaml({ modern: `transport: stdio\n    protocol: ${protocol}\n    ${MODERN_STDIO}` }),
    );
    try {
      await exercise(gw, "modern", false);
    } finally {
      await gw.close();
    }
  });

  Deno.test(`a 2025 client uses a 2026-only HTTP backend (protocol: ${protocol})`, async () => {
    const fixture = await startModernFixture();
    const gw = await startGateway(gatewayYaml({
      modern: `transport: streamable-http\n    protocol: ${protocol}\n    url: ${fixture.url}`,
    }));
    try {
      await exercise(gw, "modern", true);
    } finally {
      await gw.close();
      await fixture.close();
    }
  });
}

Deno.test("a 2025 backend under protocol: auto is used as before, and learned once", async () => {
  const fixture = await startLegacyFixture();
  const gw = await startGateway(gatewayYaml({
    "legacy-stdio": `transport: stdio\n    ${LEGACY_STDIO}`,
    "legacy-http": `transport: streamable-http\n    url: ${fixture.url}`,
  }));
  try {
    for (const server of ["legacy-stdio", "legacy-http", "legacy-stdio", "legacy-http"]) {
      const v1 = await connectV1(gw, server);
      try {
        const hello = await within(
          `${server}: a call whose backend asks the client itself`,
          v1.client.callTool({ name: "test_input_required_result_elicitation" }),
        );
        assert.equal(textOf(hello), done.hello("Ada"), server);
        await within(`${server}: ping reaches the backend`, v1.client.ping());
      } finally {
        await v1.close();
      }
    }
    const learned = gw.logs.filter((line) => line.includes("the backend speaks MCP 2025-11-25"));
    assert.equal(learned.length, 2, `learned once per server:\n${learned.join("\n")}`);
  } finally {
    await gw.close();
    await fixture.close();
  }
});

Deno.test("protocol: 2025-11-25 in front of a 2026-only backend says what it speaks and what to set", async () => {
  const fixture = await startModernFixture();
  const gw = await startGateway(gatewayYaml({
    stdio: `transport: stdio\n    protocol: 2025-11-25\n    ${MODERN_STDIO}`,
    http: `transport: streamable-http\n    protocol: 2025-11-25\n    url: ${fixture.url}`,
  }));
  try {
    for (const server of ["stdio", "http"]) {
      const error = await connectV1(gw, server).then(
        () => assert.fail(`${server}: a 2025 session was opened on a 2026-only backend`),
        (error: Error) => error,
      );
      assert.match(
        error.message,
        new RegExp(
          `the backend "${server}" speaks only MCP 2026-07-28 \\(it refused initialize: .*\\); ` +
            "its configuration says protocol: 2025-11-25: set protocol: auto \\(or 2026-07-28\\)",
        ),
        server,
      );
      assert.doesNotMatch(error.message, /could not reach the backend/, server);
    }
  } finally {
    await gw.close();
    await fixture.close();
  }
});

Deno.test("protocol: 2026-07-28 in front of a 2025-only backend says it does not speak it", async () => {
  const gw = await startGateway(
    gatewayYaml({ old: `transport: stdio\n    protocol: 2026-07-28\n    ${LEGACY_STDIO}` }),
  );
  try {
    const error = await connectV1(gw, "old").then(
      () => assert.fail("a 2025-only backend was taken for a 2026 one"),
      (error: Error) => error,
    );
    assert.match(
      error.message,
      /the backend "old" does not speak MCP 2026-07-28 \(it answered server\/discover with error -32601 .*\), yet its configuration says protocol: 2026-07-28; set protocol: auto \(or 2025-11-25\) for it/,
    );
  } finally {
    await gw.close();
  }
});

Deno.test("protocol: auto follows an HTTP backend that moved from 2025-11-25 to 2026-07-28", async () => {
  const legacy = await startLegacyFixture();
  const port = legacy.port;
  const gw = await startGateway(
    gatewayYaml({ moving: `transport: streamable-http\n    url: ${legacy.url}` }),
  );
  let modern: Awaited<ReturnType<typeof startModernFixture>> | undefined;
  try {
    const before = await connectV1(gw, "moving");
    assert.notEqual(before.client.getServerVersion()?.name, "gatehouse-modern-fixture");
    await before.close();
    await legacy.close();
    // The same URL now answers as a 2026-only server: the remembered 2025 verdict is refused
    // (-32022) and the gateway asks again.
    modern = await startModernFixture(port);
    const after = await connectV1(gw, "moving");
    try {
      assert.equal(after.client.getServerVersion()?.name, "gatehouse-modern-fixture");
      const simple = await within("a call", after.client.callTool({ name: "test_simple_text" }));
      assert.match(textOf(simple), /simple text/i);
    } finally {
      await after.close();
    }
    assert.ok(
      gw.logs.some((line) => line.includes("the backend now speaks MCP 2026-07-28")),
      "the new verdict is logged",
    );
  } finally {
    await gw.close();
    await modern?.close();
  }
});

Deno.test("protocol: auto asks a stdio backend that ignores server/discover without waiting on it", async () => {
  // Time stands still: asking may not wait for a timeout to learn the backend speaks 2025.
  const clock = testClock();
  clock.freeze();
  const gw = await startGateway(
    gatewayYaml({ quiet: `transport: stdio\n    ${SILENT_STDIO}` }),
    {},
    { clock },
  );
  try {
    const v1 = await connectV1(gw, "quiet");
    assert.match(v1.client.getServerVersion()?.name ?? "", /^bad-\d+$/);
    await v1.close();
    assert.ok(
      gw.logs.some((line) =>
        line.includes("the backend speaks MCP 2025-11-25") &&
        line.includes("it answered initialize first")
      ),
      "learned from the answer to initialize",
    );
  } finally {
    await gw.close();
  }
});

Deno.test("an aggregate reaches a 2026-only member by the member's own protocol setting", async () => {
  const gw = await startGateway(`servers:
  modern:
    transport: stdio
    public: true
    ${MODERN_STDIO}
  all:
    transport: aggregate
    public: true
    servers: [modern]
`);
  try {
    const v1 = await connectV1(gw, "all");
    try {
      const { tools } = await within("the aggregate's tools/list", v1.client.listTools());
      assert.ok(tools.some((tool) => tool.name === "modern.test_simple_text"));
      const hello = await within(
        "a member call that asks the client",
        v1.client.callTool({ name: "modern.test_input_required_result_elicitation" }),
      );
      assert.equal(textOf(hello), done.hello("Ada"));
    } finally {
      await v1.close();
    }
  } finally {
    await gw.close();
  }
});

Deno.test("two replicas: a session with a 2026-only HTTP backend stays on its replica, and elsewhere is not found", async () => {
  const fixture = await startModernFixture();
  const kv = await openKvStore(":memory:");
  const yaml = (replica: string) =>
    `replicaId: ${replica}\n` +
    gatewayYaml({
      modern: `transport: streamable-http\n    protocol: auto\n    url: ${fixture.url}`,
    });
  const a = await startGateway(yaml("a"), {}, { store: kv });
  const b = await startGateway(yaml("b"), {}, { store: kv });
  try {
    const session = await openSession(`${a.url}/modern/mcp`);
    const list = { jsonrpc: "2.0", id: 2, method: "tools/list" };
    const headers = mcpHeaders({ "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" });
    const here = await post(`${a.url}/modern/mcp`, list, headers);
    assert.equal(here.status, 200, here.text);
    const elsewhere = await post(`${b.url}/modern/mcp`, list, headers);
    assert.equal(elsewhere.status, 404, elsewhere.text);
    assert.match(elsewhere.text, /Session not found/);
  } finally {
    await a.close();
    await b.close();
    kv.close();
    await fixture.close();
  }
});
