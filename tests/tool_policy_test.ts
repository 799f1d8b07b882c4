/**
 * Tool policies on real backends: a caller sees only the tools they may use, a call to any
 * other is refused by the gateway (never reaching the backend) and audited as refused; the same
 * in a 2025 session, a 2026-07-28 stateless request and the legacy SSE transport, and inside an
 * aggregate, whose members' own policies apply and whose members a person may not use are left
 * out entirely. Service tokens bring their `groups` to tool rules.
 */
import assert from "node:assert/strict";
import { connectClient } from "./fixtures/client.ts";
import { FIXTURE_STDIO, startGateway, type TestGateway } from "./fixtures/gateway.ts";
import { mcpHeaders, post } from "./fixtures/raw.ts";
import { qualifiedName } from "../src/mcp/aggregate/names.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const EDITOR = "editor-token-0123456789abcdef";
const READER = "reader-token-0123456789abcdef";
const OUTSIDER = "outsider-token-0123456789abc";
const VERSION = "2026-07-28";

const CONFIG = `
servers:
  tools:
    transport: stdio
    ${FIXTURE_STDIO}
    serviceAuths:
      - { type: bearer, tokens: ["${EDITOR}"], groups: [editors] }
      - { type: bearer, tokens: ["${READER}"], groups: [readers] }
    tools:
      allow: ["test_*"]
      deny: ["test_error_handling"]
      rules:
        - tools: ["test_image_*"]
          access: { groups: [editors] }
  both:
    transport: aggregate
    servers: [tools, hidden]
    serviceAuths:
      - { type: bearer, tokens: ["${EDITOR}"], groups: [editors] }
      - { type: bearer, tokens: ["${OUTSIDER}"], groups: [outsiders] }
  hidden:
    transport: stdio
    ${FIXTURE_STDIO}
    serviceAuths: [{ type: bearer, tokens: ["${EDITOR}"], groups: [editors] }]
    access: { groups: [editors] }
`;

function auditOutcomes(gw: TestGateway): string[][] {
  return gw.logs.map((line) => JSON.parse(line)).filter((line) => line.msg === "audit")
    .map((line) => [line.server, line.target, line.outcome]);
}

async function names(gw: TestGateway, server: string, token: string, transport = "streamable") {
  const client = await connectClient(gw.url, server, transport as "streamable", token);
  try {
    return (await client.listTools()).tools.map((tool) => tool.name).sort();
  } finally {
    await client.close();
  }
}

Deno.test("tools/list shows a caller only the tools they may use, on every front transport", async () => {
  const gw = await startGateway(CONFIG);
  try {
    const editor = await names(gw, "tools", EDITOR);
    assert.ok(editor.includes("test_image_content"), editor.join());
    assert.ok(editor.includes("test_simple_text"));
    assert.ok(!editor.includes("test_error_handling"), "denied for everyone");
    assert.ok(editor.every((name) => name.startsWith("test_")), "only what allow matches");

    const reader = await names(gw, "tools", READER);
    assert.deepEqual(reader, editor.filter((name) => !name.startsWith("test_image_")));
    assert.deepEqual(await names(gw, "tools", READER, "sse"), reader);

    // The 2026-07-28 stateless lane gets the same list.
    const listed = await post(
      `${gw.url}/tools/mcp`,
      {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: {
          _meta: {
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities": {},
          },
        },
      },
      mcpHeaders({
        authorization: `Bearer ${READER}`,
        "mcp-protocol-version": VERSION,
        "mcp-method": "tools/list",
      }),
    );
    const tools = (listed.json as { result: { tools: { name: string }[] } }).result.tools;
    assert.deepEqual(tools.map((tool) => tool.name).sort(), reader);
  } finally {
    await gw.close();
  }
});

Deno.test("a call to a tool the caller may not use is refused by the gateway and audited as refused", async () => {
  const gw = await startGateway(`audit: { enabled: true }\n${CONFIG}`);
  try {
    const client = await connectClient(gw.url, "tools", "streamable", READER);
    const refused = await client.callTool({ name: "test_image_content", arguments: {} })
      .then(() => undefined, (error: Error) => error);
    assert.match(String(refused?.message), /not available to you on the server "tools"/);
    const allowed = await client.callTool({ name: "test_simple_text", arguments: {} });
    assert.equal(allowed.isError, undefined);
    await client.close();

    // The 2026-07-28 stateless lane is refused the same way.
    const stateless = await post(
      `${gw.url}/tools/mcp`,
      {
        jsonrpc: "2.0",
        id: 9,
        method: "tools/call",
        params: {
          name: "test_error_handling",
          arguments: {},
          _meta: {
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities": {},
          },
        },
      },
      mcpHeaders({
        authorization: `Bearer ${EDITOR}`,
        "mcp-protocol-version": VERSION,
        "mcp-method": "tools/call",
        "mcp-name": "test_error_handling",
      }),
    );
    const error = (stateless.json as { error?: { code: number; data?: unknown } }).error;
    assert.equal(error?.code, -32602, stateless.text);
    assert.deepEqual(error?.data, { reason: "tool_not_allowed" });

    assert.deepEqual(auditOutcomes(gw), [
      ["tools", "test_image_content", "refused"],
      ["tools", "test_simple_text", "ok"],
      ["tools", "test_error_handling", "refused"],
    ]);
  } finally {
    await gw.close();
  }
});

Deno.test("an aggregate leaves out members a person may not use and applies each member's tool policy", async () => {
  const gw = await startGateway(CONFIG);
  try {
    const editor = await names(gw, "both", EDITOR);
    assert.ok(editor.includes("hidden.test_error_handling"), "hidden has no tool policy");
    assert.ok(editor.includes("tools.test_image_content"));
    assert.ok(!editor.includes("tools.test_error_handling"), "the member's deny holds inside");

    const outsider = await names(gw, "both", OUTSIDER);
    assert.ok(outsider.length > 0);
    assert.ok(outsider.every((name) => name.startsWith("tools.")), "hidden is left out");
    assert.ok(!outsider.includes("tools.test_image_content"), "the member's rule holds inside");

    const client = await connectClient(gw.url, "both", "streamable", OUTSIDER);
    try {
      const refused = await client.callTool({ name: "tools.test_image_content", arguments: {} })
        .then(() => undefined, (error: Error) => error);
      assert.match(String(refused?.message), /not available to you/);
      // A left-out member's tool is refused as not allowed, not as unknown, and audited so.
      const hidden = await client.callTool({ name: "hidden.test_simple_text", arguments: {} })
        .then((result) => result, (error: Error) => error);
      assert.ok(hidden instanceof Error, `a left-out member's tool was called: ${hidden}`);
      assert.match(hidden.message, /the tool "hidden\.test_simple_text" is not available to you/);
      assert.deepEqual((hidden as Error & { data?: unknown }).data, { reason: "tool_not_allowed" });
      assert.deepEqual(
        auditOutcomes(gw).filter(([, target]) => target === "hidden.test_simple_text"),
        [["both", "hidden.test_simple_text", "refused"]],
      );
    } finally {
      await client.close();
    }
  } finally {
    await gw.close();
  }
});

Deno.test("an aggregate's tool patterns judge a member tool by its full name, though its listed name is cut to 128 characters", async () => {
  // 144 characters as `wide.<tool>`: listed as 119 of them, "_" and a hash, so the listed name
  // no longer ends in "_danger"; the pattern must still hold it back, from lists and calls,
  // and `allow` must still let the long "_safe" one through.
  const danger = `${"x".repeat(132)}_danger`;
  const safe = `${"y".repeat(134)}_safe`;
  const minimal = new URL("./fixtures/minimal_server.ts", import.meta.url).pathname;
  const gw = await startGateway(`
servers:
  wide:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, "${minimal}", "0", "plain", "tool=${danger}", "tool=${safe}"]
    serviceAuths: [{ type: bearer, tokens: ["${EDITOR}"] }]
  long:
    transport: aggregate
    servers: [wide]
    serviceAuths: [{ type: bearer, tokens: ["${EDITOR}"] }]
    tools: { allow: ["wide.echo", "*_safe", "*_danger"], deny: ["*_danger"] }
`);
  try {
    const listed = await names(gw, "long", EDITOR);
    const cutDanger = qualifiedName("wide", danger, ".");
    const cutSafe = qualifiedName("wide", safe, ".");
    assert.equal(cutDanger.length, 128);
    assert.ok(listed.includes(cutSafe), `the long safe tool is listed: ${listed}`);
    assert.ok(!listed.includes(cutDanger), "the long _danger tool is not listed");
    assert.deepEqual(listed.filter((name) => name.length < 128), ["wide.echo"]);

    const client = await connectClient(gw.url, "long", "streamable", EDITOR);
    try {
      const refused = await client.callTool({ name: cutDanger, arguments: { a: 1 } })
        .then((result) => result, (error: Error) => error);
      assert.ok(
        refused instanceof Error,
        `the _danger tool was called: ${JSON.stringify(refused)}`,
      );
      assert.match(refused.message, /not available to you/);
      assert.deepEqual((refused as Error & { data?: unknown }).data, {
        reason: "tool_not_allowed",
      });
      const called = await client.callTool({ name: cutSafe, arguments: { via: "cut name" } });
      assert.deepEqual(called.content, [{ type: "text", text: '{"via":"cut name"}' }]);
    } finally {
      await client.close();
    }
  } finally {
    await gw.close();
  }
});
