/**
 * `subscriptions/listen` of a 2026-07-28 client in front of a 2025 backend: list changes and
 * resource updates the backend sends its session unasked reach the listen stream, tagged with
 * the listen's id, and only those the filter asked for.
 */
import assert from "node:assert/strict";
import { LEGACY_EVERYTHING_STDIO, startGateway, type TestGateway } from "./fixtures/gateway.ts";
import { mcpHeaders, post } from "./fixtures/raw.ts";
import { waitUntil, within } from "./fixtures/waits.ts";
import { connectV2Client } from "./fixtures/v2_client.ts";

const CONFIG = `
limits: { requestTimeout: 20s }
servers:
  legacy:
    transport: stdio
    ${LEGACY_EVERYTHING_STDIO}
    public: true
`;
const VERSION = "2026-07-28";
const META = {
  "io.modelcontextprotocol/protocolVersion": VERSION,
  "io.modelcontextprotocol/clientCapabilities": {},
};
const SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId";

function headers(method: string, name?: string) {
  return mcpHeaders({
    "mcp-protocol-version": VERSION,
    "mcp-method": method,
    ...(name ? { "mcp-name": name } : {}),
  });
}

async function trigger(gw: TestGateway, id: number, name: string) {
  const body = {
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name, arguments: {}, _meta: META },
  };
  const answer = await post(`${gw.url}/legacy/mcp`, body, headers("tools/call", name));
  assert.equal(answer.status, 200, answer.text);
}

/** Reads SSE messages off `body` as they come. */
function messages(body: ReadableStream<Uint8Array>) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  return {
    async next(): Promise<Record<string, unknown>> {
      for (;;) {
        const end = buffer.indexOf("\n\n");
        if (end >= 0) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = event.split("\n").filter((line) => line.startsWith("data: "))
            .map((line) => line.slice(6)).join("\n");
          if (data) return JSON.parse(data);
          continue;
        }
        const { value, done } = await within("the next listen message", reader.read());
        if (done) throw new Error("the listen stream ended");
        buffer += value;
      }
    },
    cancel: () => reader.cancel(),
  };
}

Deno.test("a listen stream gets the list changes and resource updates it asked for, tagged with its id", async () => {
  const gw = await startGateway(CONFIG);
  let stream: ReturnType<typeof messages> | undefined;
  try {
    const listen = await fetch(`${gw.url}/legacy/mcp`, {
      method: "POST",
      headers: headers("subscriptions/listen"),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "listen-1",
        method: "subscriptions/listen",
        params: {
          _meta: META,
          notifications: {
            toolsListChanged: true,
            resourceSubscriptions: ["test://watched-resource"],
          },
        },
      }),
    });
    assert.equal(listen.status, 200);
    assert.equal(listen.headers.get("content-type"), "text/event-stream");
    stream = messages(listen.body!);
    const ack = await stream.next();
    assert.equal(ack.method, "notifications/subscriptions/acknowledged");
    assert.deepEqual(ack.params, {
      notifications: { toolsListChanged: true, resourceSubscriptions: ["test://watched-resource"] },
      _meta: { [SUBSCRIPTION]: "listen-1" },
    });

    // Prompt changes were not asked for: the next message is the tool change.
    await trigger(gw, 1, "test_trigger_prompt_change");
    await trigger(gw, 2, "test_trigger_tool_change");
    const changed = await stream.next();
    assert.equal(changed.method, "notifications/tools/list_changed");
    assert.deepEqual(changed.params, { _meta: { [SUBSCRIPTION]: "listen-1" } });

    await trigger(gw, 3, "test_trigger_resource_update");
    const updated = await stream.next();
    assert.equal(updated.method, "notifications/resources/updated");
    assert.deepEqual(updated.params, {
      uri: "test://watched-resource",
      _meta: { [SUBSCRIPTION]: "listen-1" },
    });
  } finally {
    await stream?.cancel();
    await gw.close();
  }
});

Deno.test("the v2 SDK client pinned to 2026-07-28 hears a 2025 backend's tool list change", async () => {
  const gw = await startGateway(CONFIG);
  const v2 = await connectV2Client(`${gw.url}/legacy/mcp`, { negotiation: "pinned" });
  try {
    let changes = 0;
    v2.client.setNotificationHandler("notifications/tools/list_changed", () => void changes++);
    const listening = await within(
      "subscriptions/listen",
      v2.client.listen({ toolsListChanged: true }),
    );
    await within("the trigger", v2.client.callTool({ name: "test_trigger_tool_change" }));
    await waitUntil("tools/list_changed on the listen stream", () => changes === 1);
    await within("the listen stream to close", listening.close());
    const { tools } = await v2.client.listTools();
    assert.ok(tools.some((tool) => tool.name === "test_dynamic_tool"));
  } finally {
    await v2.close();
    await gw.close();
  }
});
