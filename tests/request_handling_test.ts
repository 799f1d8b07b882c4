/**
 * How the gateway handles requests a client or a backend gets wrong: an `initialize` without
 * what a session needs, two requests in flight under one id, and a stdio backend whose output
 * is JSON but not JSON-RPC or whose SDK answers with a schema library's dump. Each gets one
 * sentence saying what was wrong, and nothing is left hanging.
 */
import assert from "node:assert/strict";
import { FIXTURE_STDIO, startGateway, type TestGateway } from "./fixtures/gateway.ts";
import { INIT, mcpHeaders, openSession, post } from "./fixtures/raw.ts";
import { waitUntil, within } from "./fixtures/waits.ts";
import type { SessionId } from "../src/core/ids.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const ROOT = new URL("../", import.meta.url).pathname;

const CONFIG = `
limits: { requestTimeout: 20s }
servers:
  fx:
    transport: stdio
    ${FIXTURE_STDIO}
    public: true
  badid:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, "${ROOT}tests/fixtures/bad_backend.ts", bad-id]
    public: true
`;

const started = (gw: TestGateway) =>
  gw.logs.filter((line) => line.includes('"backend process started"')).length;

Deno.test("initialize without what a session needs gets 400 Invalid params naming the field, and no session", async (t) => {
  const gw = await startGateway(CONFIG);
  try {
    const { params } = INIT;
    const cases: [string, unknown, string][] = [
      [
        "no params",
        undefined,
        "initialize needs params: an object with protocolVersion, capabilities and clientInfo",
      ],
      [
        "no protocolVersion",
        { capabilities: {}, clientInfo: params.clientInfo },
        'initialize needs params.protocolVersion (a string such as "2025-11-25")',
      ],
      [
        "a numeric protocolVersion",
        { ...params, protocolVersion: 20251125 },
        'initialize needs params.protocolVersion (a string such as "2025-11-25")',
      ],
      [
        "no capabilities",
        { protocolVersion: params.protocolVersion, clientInfo: params.clientInfo },
        "initialize needs params.capabilities (an object, {} when the client offers none)",
      ],
      [
        "no clientInfo",
        { protocolVersion: params.protocolVersion, capabilities: {} },
        "initialize needs params.clientInfo (an object with the client's name and version)",
      ],
    ];
    for (const [what, badParams, message] of cases) {
      await t.step(`Streamable HTTP, ${what}`, async () => {
        const sessions = gw.gateway.sessions.size;
        const backends = started(gw);
        const answer = await post(`${gw.url}/fx/mcp`, {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          ...(badParams !== undefined && { params: badParams }),
        });
        assert.equal(answer.status, 400);
        assert.deepEqual(answer.json, {
          jsonrpc: "2.0",
          id: 1,
          error: { code: -32602, message },
        });
        assert.equal(answer.headers.get("mcp-session-id"), null);
        assert.equal(gw.gateway.sessions.size, sessions);
        assert.equal(started(gw), backends, "no backend process was started");
      });
    }

    await t.step("legacy SSE: refused with 400, the stream and its backend end", async () => {
      const sessions = gw.gateway.sessions.size;
      const stream = await fetch(`${gw.url}/fx/sse`, { headers: { accept: "text/event-stream" } });
      const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
      try {
        let received = "";
        while (!/data: (\S+)/.test(received)) {
          const { value, done } = await within("the endpoint event", reader.read());
          if (done) throw new Error(`the stream ended before its endpoint event: ${received}`);
          received += value;
        }
        const endpoint = new URL(/data: (\S+)/.exec(received)![1], gw.url);
        const sessionId = endpoint.searchParams.get("sessionId") as SessionId;
        assert.ok(gw.gateway.sessions.get(sessionId));
        const answer = await post(
          endpoint.href,
          { jsonrpc: "2.0", id: 0, method: "initialize" },
          { "content-type": "application/json" },
        );
        assert.equal(answer.status, 400);
        assert.deepEqual(answer.json, {
          jsonrpc: "2.0",
          id: 0,
          error: { code: -32602, message: cases[0][2] },
        });
        while (!(await within("the SSE stream to end", reader.read())).done) { /* drain */ }
        await waitUntil("the session to end", () => !gw.gateway.sessions.get(sessionId));
        assert.equal(gw.gateway.sessions.size, sessions);
      } finally {
        await reader.cancel().catch(() => {});
      }
    });

    await t.step("a valid initialize still opens a session", async () => {
      const answer = await post(`${gw.url}/fx/mcp`, INIT);
      assert.equal(answer.status, 200, answer.text);
      assert.ok(answer.headers.get("mcp-session-id"));
    });
  } finally {
    await gw.close();
  }
});

Deno.test("a second request under the id of one still in flight is refused; the first gets its answer", async () => {
  const gw = await startGateway(CONFIG);
  const first = new AbortController();
  try {
    const url = `${gw.url}/fx/mcp`;
    const sessionId = await openSession(url);
    const headers = mcpHeaders({ "mcp-session-id": sessionId });
    const session = gw.gateway.sessions.get(sessionId as SessionId)!;
    const sleepCall = (ms: number) => ({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "sleep", arguments: { ms } },
    });
    const slow = fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify(sleepCall(3_000)),
      signal: first.signal,
    }).then((response) => response.text());
    slow.catch(() => {}); // aborted in `finally` when the test fails before reading it
    await waitUntil("the slow call to be in flight", () => session.isInFlight(7));

    const second = await post(url, sleepCall(1), headers);
    assert.ok(session.isInFlight(7), "the slow call was still in flight when the second came");
    assert.equal(second.status, 400);
    assert.deepEqual(second.json, {
      jsonrpc: "2.0",
      id: 7,
      error: {
        code: -32600,
        message: "a request with id 7 is already in flight in this session; use a new id",
      },
    });

    // Had the second reached the backend, its quick answer would have settled id 7 first.
    const answer = await within("the first call's answer", slow);
    const data = answer.split("\n").filter((line) => line.startsWith("data: ") && line.length > 6);
    assert.deepEqual(JSON.parse(data[data.length - 1].slice(6)), {
      jsonrpc: "2.0",
      id: 7,
      result: { content: [{ type: "text", text: "slept 3000ms" }] },
    });
    assert.equal(session.isInFlight(7), false);
    // Once answered, the id is free again.
    const reused = await post(url, sleepCall(1), headers);
    assert.equal(reused.status, 200, reused.text);
  } finally {
    first.abort();
    await gw.close();
  }
});

Deno.test("a stdio backend's JSON that is not JSON-RPC ends its session with one sentence; the line goes to the log", async () => {
  const gw = await startGateway(CONFIG);
  try {
    const url = `${gw.url}/badid/mcp`;
    const sessionId = await openSession(url);
    const call = await post(
      url,
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "x", arguments: {} } },
      mcpHeaders({ "mcp-session-id": sessionId }),
    );
    assert.deepEqual(call.json, {
      jsonrpc: "2.0",
      id: 2,
      error: {
        code: -32000,
        message: 'the backend wrote a message that is not valid JSON-RPC 2.0: its "id" must be ' +
          "a string or a number before answering tools/call",
      },
    });
    const logged = gw.logs.map((line) => JSON.parse(line)).find((record) =>
      record.msg === "backend wrote a message that is not valid JSON-RPC 2.0"
    );
    assert.equal(logged?.level, "warn");
    assert.equal(logged?.reason, 'its "id" must be a string or a number');
    assert.equal(logged?.line, '{"jsonrpc":"2.0","id":{},"result":{}}');
    await waitUntil("the session to end", () => !gw.gateway.sessions.get(sessionId as SessionId));
  } finally {
    await gw.close();
  }
});

Deno.test("a stdio backend's schema-library dump reaches the client as one sentence", async () => {
  const gw = await startGateway(CONFIG);
  try {
    const url = `${gw.url}/fx/mcp`;
    const sessionId = await openSession(url);
    const headers = mcpHeaders({ "mcp-session-id": sessionId });
    // The fixture is an SDK server: it checks resources/read's params against its zod schema.
    const read = await post(
      url,
      { jsonrpc: "2.0", id: 2, method: "resources/read", params: {} },
      headers,
    );
    assert.deepEqual(read.json, {
      jsonrpc: "2.0",
      id: 2,
      error: {
        code: -32603,
        message: "the backend found the request invalid at params.uri: " +
          "Invalid input: expected string, received undefined",
      },
    });
    // The session is unharmed: the next call is answered.
    const next = await post(url, { jsonrpc: "2.0", id: 3, method: "ping" }, headers);
    assert.deepEqual(next.json, { jsonrpc: "2.0", id: 3, result: {} });
  } finally {
    await gw.close();
  }
});
