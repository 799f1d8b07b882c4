/**
 * The audit trail: each tool call, prompt get and resource read is one `audit` line with who
 * (person, client), which server and target, the outcome and the duration; arguments only when
 * the operator asks for them.
 */
import assert from "node:assert/strict";
import { connectClient } from "./fixtures/client.ts";
import { FIXTURE_STDIO, startGateway, type TestGateway } from "./fixtures/gateway.ts";

const TOKEN = "audit-test-token-0123456789";

function config(audit: string) {
  return `
${audit}
servers:
  tools:
    transport: stdio
    ${FIXTURE_STDIO}
    serviceAuths: [{ type: bearer, tokens: ["${TOKEN}"] }]
`;
}

function auditLines(gw: TestGateway): Record<string, unknown>[] {
  return gw.logs.map((line) => JSON.parse(line)).filter((line) => line.msg === "audit");
}

Deno.test("each call is audited with who, which server and target, outcome and duration; no arguments by default", async () => {
  const gw = await startGateway(config(""));
  try {
    const client = await connectClient(gw.url, "tools", "streamable", TOKEN);
    await client.callTool({ name: "test_simple_text", arguments: { secretish: "personal data" } });
    await client.callTool({ name: "test_error_handling", arguments: {} });
    await client.callTool({ name: "no_such_tool", arguments: {} }).catch(() => {});
    await client.getPrompt({ name: "test_simple_prompt" });
    await client.readResource({ uri: "test://static-text" });
    await client.listTools();
    await client.close();

    const lines = auditLines(gw);
    const summary = lines.map((l) => [l.method, l.target, l.outcome]);
    assert.deepEqual(summary, [
      ["tools/call", "test_simple_text", "ok"],
      ["tools/call", "test_error_handling", "tool_error"],
      ["tools/call", "no_such_tool", summary[2][2]],
      ["prompts/get", "test_simple_prompt", "ok"],
      ["resources/read", "test://static-text", "ok"],
    ]);
    // The SDK server answers an unknown tool either way, depending on its version.
    assert.ok(["error", "tool_error"].includes(String(summary[2][2])));
    const [first] = lines;
    assert.match(String(first.user), /^token:[0-9a-f]{12}$/);
    assert.equal(first.server, "tools");
    assert.match(String(first.session), /^[0-9a-f]{32}$/);
    assert.equal(typeof first.durationMs, "number");
    assert.ok((first.durationMs as number) >= 0);
    assert.equal("arguments" in first, false);
    assert.ok(!gw.logs.join("\n").includes("personal data"));
  } finally {
    await gw.close();
  }
});

Deno.test("audit.arguments: true records arguments; audit.enabled: false records nothing", async () => {
  const withArguments = await startGateway(config("audit: { arguments: true }"));
  const disabled = await startGateway(config("audit: { enabled: false }"));
  try {
    for (const gw of [withArguments, disabled]) {
      const client = await connectClient(gw.url, "tools", "sse", TOKEN);
      await client.callTool({ name: "test_simple_text", arguments: { note: "kept" } });
      await client.close();
    }
    const [line] = auditLines(withArguments);
    assert.deepEqual(line.arguments, { note: "kept" });
    assert.deepEqual(auditLines(disabled), []);
  } finally {
    await withArguments.close();
    await disabled.close();
  }
});
