/**
 * Log messages for 2026-07-28 clients: a request that sets `_meta` logLevel gets the backend's
 * log messages from that level up on its own SSE stream, before its answer; a request that sets
 * none gets none. A 2025 backend's logs name no request, so the gateway gives one to a call only
 * when that call is the one in flight on the person's link. Both backend revisions, real
 * fixture servers over stdio.
 */
import assert from "node:assert/strict";
import {
  LEGACY_EVERYTHING_STDIO,
  MODERN_EVERYTHING_STDIO,
  startGateway,
  type TestGateway,
} from "./fixtures/gateway.ts";
import { mcpHeaders, post } from "./fixtures/raw.ts";

const TOKEN = "logs-token-0123456789abcdef";
const VERSION = "2026-07-28";

function config(backend: string): string {
  return `
servers:
  fx:
    transport: stdio
    ${backend}
    serviceAuths: [{ type: bearer, tokens: ["${TOKEN}"] }]
`;
}

/** Calls `tool` as a 2026 client; returns every message of the answer, the response last. */
async function call(gw: TestGateway, tool: string, logLevel?: string) {
  const meta: Record<string, unknown> = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
  };
  if (logLevel) meta["io.modelcontextprotocol/logLevel"] = logLevel;
  const answer = await post(
    `${gw.url}/fx/mcp`,
    {
      jsonrpc: "2.0",
      id: 5,
      method: "tools/call",
      params: { name: tool, arguments: {}, _meta: meta },
    },
    mcpHeaders({
      authorization: `Bearer ${TOKEN}`,
      "mcp-protocol-version": VERSION,
      "mcp-method": "tools/call",
      "mcp-name": tool,
    }),
  );
  assert.equal(answer.status, 200, answer.text);
  const sse = answer.headers.get("content-type")?.includes("text/event-stream");
  const messages = sse
    ? answer.text.split("\n").filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice(6)))
    : [JSON.parse(answer.text)];
  return {
    logs: messages.filter((m) => m.method === "notifications/message"),
    response: messages.at(-1),
  };
}

for (
  const [revision, backend] of [
    ["2025-11-25", LEGACY_EVERYTHING_STDIO],
    ["2026-07-28", MODERN_EVERYTHING_STDIO],
  ]
) {
  Deno.test(`a 2026 request that sets logLevel gets a ${revision} backend's logs on its stream`, async () => {
    const gw = await startGateway(config(backend));
    try {
      const asked = await call(gw, "test_tool_with_logging", "debug");
      assert.equal(asked.response.id, 5);
      assert.equal(asked.response.result.isError, undefined, JSON.stringify(asked.response));
      assert.equal(asked.logs.length, 3, JSON.stringify(asked.logs));
      assert.ok(asked.logs.every((log) => log.params.level === "info"));

      // None asked, none given; a level above the messages' filters them out.
      assert.deepEqual((await call(gw, "test_tool_with_logging")).logs, []);
      assert.deepEqual((await call(gw, "test_logging_tool")).logs, []);
      assert.deepEqual((await call(gw, "test_tool_with_logging", "error")).logs, []);
    } finally {
      await gw.close();
    }
  });
}
