/**
 * `servers.NAME.requestTimeout` overrides `limits.requestTimeout` for that server, on the
 * session lane and the stateless (2026-07-28) lane, longer or shorter; inside an aggregate
 * each member's calls keep to the member's own value. Real fixture backends whose tools stall
 * (`hang`) or take their time (`sleep`).
 */
import assert from "node:assert/strict";
import { connectClient } from "./fixtures/client.ts";
import { FIXTURE_STDIO, startGateway } from "./fixtures/gateway.ts";
import { mcpHeaders, post } from "./fixtures/raw.ts";
import { within } from "./fixtures/waits.ts";

/** Past every timeout below: a call that outlives it was not bounded by the server's own. */
const SDK_TIMEOUT = { timeout: 60_000 };

Deno.test("a server's requestTimeout cuts a stalled call sooner than limits.requestTimeout, on both lanes", async () => {
  const gw = await startGateway(`
limits: { requestTimeout: 5m }
servers:
  quick:
    transport: stdio
    ${FIXTURE_STDIO}
    public: true
    requestTimeout: 6s
`);
  const client = await connectClient(gw.url, "quick", "streamable");
  try {
    const expected = /did not answer tools\/call within 6s \(servers\.quick\.requestTimeout\)/;
    await within(
      "the session lane's call to time out",
      assert.rejects(client.callTool({ name: "hang" }, undefined, SDK_TIMEOUT), expected),
    );
    // A 2026-07-28 request, without a session: the gateway's own session behind it.
    const version = "2026-07-28";
    const stateless = await within(
      "the stateless lane's call to time out",
      post(
        `${gw.url}/quick/mcp`,
        {
          jsonrpc: "2.0",
          id: 7,
          method: "tools/call",
          params: {
            name: "hang",
            arguments: {},
            _meta: {
              "io.modelcontextprotocol/protocolVersion": version,
              "io.modelcontextprotocol/clientCapabilities": {},
              "io.modelcontextprotocol/clientInfo": { name: "wire-test", version: "1" },
            },
          },
        },
        mcpHeaders({
          "mcp-protocol-version": version,
          "mcp-method": "tools/call",
          "mcp-name": "hang",
        }),
      ),
    );
    assert.match(stateless.text, expected);
  } finally {
    await client.close();
    await gw.close();
  }
});

Deno.test("a server's requestTimeout lets a slow call finish past limits.requestTimeout", async () => {
  const gw = await startGateway(`
limits: { requestTimeout: 5s }
servers:
  patient:
    transport: stdio
    ${FIXTURE_STDIO}
    public: true
    requestTimeout: 5m
`);
  const client = await connectClient(gw.url, "patient", "streamable");
  try {
    const result = await client.callTool(
      { name: "sleep", arguments: { ms: 7_000 } },
      undefined,
      SDK_TIMEOUT,
    );
    assert.deepEqual(result.content, [{ type: "text", text: "slept 7000ms" }]);
  } finally {
    await client.close();
    await gw.close();
  }
});

Deno.test("in an aggregate, each member's calls keep to that member's own requestTimeout", async () => {
  const gw = await startGateway(`
limits: { requestTimeout: 5s }
servers:
  patient:
    transport: stdio
    ${FIXTURE_STDIO}
    public: true
    requestTimeout: 5m
  plain:
    transport: stdio
    ${FIXTURE_STDIO}
    public: true
  both:
    transport: aggregate
    servers: [patient, plain]
    public: true
`);
  const client = await connectClient(gw.url, "both", "streamable");
  try {
    const [slow, stalled] = await within(
      "both members' calls to end",
      Promise.allSettled([
        client.callTool(
          { name: "patient.sleep", arguments: { ms: 7_000 } },
          undefined,
          SDK_TIMEOUT,
        ),
        client.callTool({ name: "plain.hang" }, undefined, SDK_TIMEOUT),
      ]),
    );
    assert.equal(slow.status, "fulfilled", String((slow as PromiseRejectedResult).reason));
    assert.deepEqual(slow.value.content, [{ type: "text", text: "slept 7000ms" }]);
    assert.equal(stalled.status, "rejected");
    assert.match(String(stalled.reason), /plain did not answer tools\/call within 5s/);
  } finally {
    await client.close();
    await gw.close();
  }
});
