/**
 * MCP 2026-07-28 clients in front of a backend that speaks 2025-11-25: each request on its
 * own, no session, the gateway keeping one initialized backend session per person and server
 * behind them. Sent as a 2026 client writes them on the wire (headers and `_meta`), to the
 * real fixture server over stdio.
 */
import assert from "node:assert/strict";
import { FIXTURE_STDIO, startGateway, type TestGateway } from "./fixtures/gateway.ts";
import { INIT, mcpHeaders, openSession, post } from "./fixtures/raw.ts";
import { connectV2Client, PINNED_VERSION } from "./fixtures/v2_client.ts";

const CONFIG = `
limits: { requestTimeout: 20s, sessionsPerUser: 2 }
servers:
  fx:
    transport: stdio
    ${FIXTURE_STDIO}
    serviceAuths: [{ type: bearer, tokens: ["alice-token-0123456789abcdef"] }]
`;
const ALICE = { authorization: "Bearer alice-token-0123456789abcdef" };
const VERSION = "2026-07-28";

function meta(extra: Record<string, unknown> = {}) {
  return {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": { name: "wire-test", version: "1" },
    ...extra,
  };
}

/** A 2026 request: body with `_meta`, and the headers that must agree with it. */
function modern(id: number | string, method: string, params: Record<string, unknown> = {}) {
  const body = { jsonrpc: "2.0", id, method, params: { ...params, _meta: meta() } };
  const headers = mcpHeaders({ ...ALICE, "mcp-protocol-version": VERSION, "mcp-method": method });
  const name = method === "resources/read" ? params.uri : params.name;
  if (typeof name === "string") headers["mcp-name"] = name;
  return { body, headers };
}

async function send(gw: TestGateway, id: number | string, method: string, params = {}) {
  const { body, headers } = modern(id, method, params);
  return await post(`${gw.url}/fx/mcp`, body, headers);
}

const result = (answer: { json: unknown }) =>
  (answer.json as { result: Record<string, unknown> }).result;

Deno.test("a 2026-07-28 client discovers, lists and calls tools without a session", async () => {
  const gw = await startGateway(CONFIG);
  try {
    const discover = await send(gw, 1, "server/discover");
    assert.equal(discover.status, 200, discover.text);
    assert.equal(discover.headers.get("mcp-session-id"), null);
    const found = result(discover);
    // Every revision /fx/mcp serves, as -32022 lists them: 2026-07-28, then sessions' ones.
    const versions = found.supportedVersions as string[];
    assert.equal(versions[0], VERSION);
    assert.ok(versions.includes("2025-11-25"), `supportedVersions: ${versions}`);
    assert.equal(found.resultType, "complete");
    assert.ok((found.capabilities as Record<string, unknown>).tools, JSON.stringify(found));
    assert.equal(
      (found._meta as Record<string, Record<string, unknown>>)["io.modelcontextprotocol/serverInfo"]
        .name,
      "gatehouse-fixture",
    );

    const list = await send(gw, 2, "tools/list");
    assert.equal(list.status, 200, list.text);
    const tools = result(list);
    assert.equal(tools.resultType, "complete");
    assert.equal(tools.ttlMs, 0);
    assert.equal(tools.cacheScope, "private");
    assert.ok((tools.tools as { name: string }[]).some((tool) => tool.name === "test_simple_text"));

    const call = await send(gw, "call-1", "tools/call", {
      name: "test_simple_text",
      arguments: {},
    });
    assert.equal(call.status, 200, call.text);
    assert.equal((call.json as { id: unknown }).id, "call-1");
    assert.equal(result(call).resultType, "complete");
    assert.deepEqual(result(call).content, [{
      type: "text",
      text: "This is a simple text response for testing.",
    }]);
  } finally {
    await gw.close();
  }
});

Deno.test("two 2026 clients of one person may use the same request ids at once", async () => {
  const gw = await startGateway(CONFIG);
  try {
    const answers = await Promise.all(
      [1, 1, 1, 1].map((id, n) =>
        send(gw, id, "tools/call", { name: "test_simple_text", arguments: { n } })
      ),
    );
    for (const answer of answers) {
      assert.equal(answer.status, 200, answer.text);
      assert.equal((answer.json as { id: unknown }).id, 1);
      assert.equal(result(answer).resultType, "complete", answer.text);
    }
    // Calls that may take input get a link each while the person has room (sessionsPerUser:
    // 2), and share one beyond it.
    const started = gw.logs.filter((line) => line.includes('"backend process started"'));
    assert.equal(started.length, 2, started.join("\n"));
  } finally {
    await gw.close();
  }
});

Deno.test("2025 sessions and 2026 requests share the URL and the person's session limit", async () => {
  const gw = await startGateway(CONFIG);
  try {
    const session = await openSession(`${gw.url}/fx/mcp`, ALICE);
    const listed = await post(
      `${gw.url}/fx/mcp`,
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      mcpHeaders({ ...ALICE, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" }),
    );
    assert.equal(listed.status, 200, listed.text);
    assert.equal(result(listed).resultType, undefined, "a 2025 client gets 2025 results");

    const modernList = await send(gw, 3, "tools/list");
    assert.equal(modernList.status, 200, modernList.text);
    // The link is the person's second session (sessionsPerUser: 2): a third 2025 session ends
    // the least recently used idle one to make room, as at any limit.
    const third = await post(`${gw.url}/fx/mcp`, INIT, mcpHeaders(ALICE));
    assert.equal(third.status, 200, third.text);
    const evicted = await post(
      `${gw.url}/fx/mcp`,
      { jsonrpc: "2.0", id: 5, method: "tools/list" },
      mcpHeaders({ ...ALICE, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" }),
    );
    assert.equal(evicted.status, 404, "the first session made room: the link holds a place");
    const again = await send(gw, 4, "tools/list");
    assert.equal(again.status, 200, again.text);
  } finally {
    await gw.close();
  }
});

Deno.test("a 2026 request the gateway cannot serve is refused as the revision says", async () => {
  const gw = await startGateway(CONFIG);
  try {
    const unsupported = modern(1, "tools/list");
    unsupported.headers["mcp-protocol-version"] = "2099-01-01";
    (unsupported.body.params._meta as Record<string, unknown>)[
      "io.modelcontextprotocol/protocolVersion"
    ] = "2099-01-01";
    const refused = await post(`${gw.url}/fx/mcp`, unsupported.body, unsupported.headers);
    assert.equal(refused.status, 400);
    const error = refused.json as { id: unknown; error: { code: number; data: unknown } };
    assert.equal(error.id, 1);
    assert.equal(error.error.code, -32022);
    // Every revision /fx/mcp serves: 2026-07-28 on its own, 2025-11-25 (and older) in a session.
    const { supported } = error.error.data as { supported: string[] };
    assert.deepEqual(error.error.data, { supported, requested: "2099-01-01" });
    assert.equal(supported[0], VERSION);
    assert.ok(supported.includes("2025-11-25"), `supported: ${supported}`);

    const ping = await send(gw, 2, "ping");
    assert.equal(ping.status, 404);
    assert.equal((ping.json as { error: { code: number } }).error.code, -32601);

    const unknown = await send(gw, 5, "unknown/method");
    assert.equal(unknown.status, 404, unknown.text);
    assert.equal((unknown.json as { id: unknown; error: { code: number } }).error.code, -32601);
    assert.equal((unknown.json as { id: unknown }).id, 5);

    const noAuth = modern(4, "tools/list");
    delete (noAuth.headers as Record<string, string>).authorization;
    const unauthorized = await post(`${gw.url}/fx/mcp`, noAuth.body, noAuth.headers);
    assert.equal(unauthorized.status, 401);
  } finally {
    await gw.close();
  }
});

Deno.test("the v2 SDK client, pinned to 2026-07-28, negotiating or on its default, works through the gateway to a 2025 backend", async () => {
  const gw = await startGateway(CONFIG);
  try {
    // "legacy" is the v2 SDK's default: it opens a 2025-11-25 session as v1 clients do.
    const expected = { pinned: PINNED_VERSION, auto: PINNED_VERSION, legacy: "2025-11-25" };
    for (const negotiation of ["pinned", "auto", "legacy"] as const) {
      const v2 = await connectV2Client(`${gw.url}/fx/mcp`, {
        negotiation,
        token: "alice-token-0123456789abcdef",
      });
      try {
        assert.equal(v2.client.getNegotiatedProtocolVersion(), expected[negotiation], negotiation);
        const { tools } = await v2.client.listTools();
        assert.ok(tools.some((tool) => tool.name === "test_simple_text"), negotiation);
        const called = await v2.client.callTool({ name: "test_simple_text", arguments: {} });
        assert.deepEqual(called.content, [
          { type: "text", text: "This is a simple text response for testing." },
        ]);
      } finally {
        await v2.close();
      }
    }
    // The person's one link served both 2026 clients; the default client has its own session.
    const started = gw.logs.filter((line) => line.includes('"backend process started"'));
    assert.equal(started.length, 2, started.join("\n"));
  } finally {
    await gw.close();
  }
});

Deno.test("a GET or DELETE of a 2026-07-28 client without a session is answered 405 with Allow: POST", async () => {
  const gw = await startGateway(CONFIG);
  try {
    for (const method of ["GET", "DELETE"]) {
      const response = await fetch(`${gw.url}/fx/mcp`, {
        method,
        headers: { ...ALICE, accept: "text/event-stream", "mcp-protocol-version": VERSION },
      });
      const body = await response.json();
      assert.equal(response.status, 405, `${method}: ${JSON.stringify(body)}`);
      assert.equal(response.headers.get("allow"), "POST", method);
      assert.match(body.error.message, /Method Not Allowed: MCP 2026-07-28 sends every request/);
    }
    // A 2025 client without a session is still told to initialize first.
    const old = await fetch(`${gw.url}/fx/mcp`, {
      headers: { ...ALICE, accept: "text/event-stream", "mcp-protocol-version": "2025-11-25" },
    });
    assert.equal(old.status, 400);
    assert.match((await old.json()).error.message, /Mcp-Session-Id header is required/);
  } finally {
    await gw.close();
  }
});
