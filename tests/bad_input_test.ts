/** Hostile and malformed input at the HTTP edge: each gets its specific, documented error. */
import assert from "node:assert/strict";
import { startGateway, type TestGateway } from "./fixtures/gateway.ts";
import { INIT, mcpHeaders, openSession, post } from "./fixtures/raw.ts";
import { waitUntil, within } from "./fixtures/waits.ts";
import type { SessionId } from "../src/core/ids.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const TOKEN = "bad-input-token-123456";
const auth = { authorization: `Bearer ${TOKEN}` };

async function withGateway(
  fn: (gw: TestGateway, url: string) => Promise<void>,
  limits = "{ maxMessageBytes: 64KiB }",
) {
  const gw = await startGateway(`
baseUrl: http://127.0.0.1:{{PORT}}
allowedOrigins: ["https://app.example.com"]
limits: ${limits}
servers:
  min:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts"]
    serviceAuths: [{ type: bearer, tokens: ["${TOKEN}"] }]
`);
  try {
    await fn(gw, `${gw.url}/min/mcp`);
  } finally {
    await gw.close();
  }
}

Deno.test("GET /health answers ok; unknown paths and servers get JSON 404s", async () => {
  await withGateway(async (gw) => {
    const health = await fetch(`${gw.url}/health`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: "ok", storage: "up" });
    assert.equal(health.headers.get("x-content-type-options"), "nosniff");
    const first = health.headers.get("x-request-id") ?? "";
    assert.match(first, /^[0-9a-f]{8}-[0-9a-z]+$/);
    const again = await fetch(`${gw.url}/health`);
    await again.body?.cancel();
    assert.notEqual(again.headers.get("x-request-id"), first, "each request gets its own id");

    const unknown = await post(`${gw.url}/nope/mcp`, INIT, mcpHeaders(auth));
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.json, {
      error: "unknown_server",
      error_description: 'no server named "nope" is configured',
    });
    const lost = await fetch(`${gw.url}/min/elsewhere`);
    assert.equal(lost.status, 404);
    assert.equal(((await lost.json()) as { error: string }).error, "not_found");
  });
});

Deno.test("bearer auth: missing and wrong tokens get 401 with a Bearer challenge", async () => {
  await withGateway(async (_gw, url) => {
    const missing = await post(url, INIT);
    assert.equal(missing.status, 401);
    assert.equal(missing.headers.get("www-authenticate"), 'Bearer realm="gatehouse"');
    assert.equal((missing.json as { error: string }).error, "unauthorized");

    const wrong = await post(url, INIT, mcpHeaders({ authorization: "Bearer not-the-token" }));
    assert.equal(wrong.status, 401);
    assert.equal(
      wrong.headers.get("www-authenticate"),
      `Bearer realm="gatehouse", error="invalid_token", error_description="the bearer token is not valid for the server 'min'"`,
    );
    assert.deepEqual(wrong.json, {
      error: "invalid_token",
      error_description: 'the bearer token is not valid for the server "min"',
    });
    const basic = await post(url, INIT, mcpHeaders({ authorization: `Basic ${btoa("a:b")}` }));
    assert.equal(basic.status, 401);
  });
});

Deno.test("Origin: a foreign origin gets 403, the gateway's own and configured ones pass", async () => {
  await withGateway(async (gw, url) => {
    const foreign = await post(url, INIT, mcpHeaders({ ...auth, origin: "https://evil.example" }));
    assert.equal(foreign.status, 403);
    assert.equal((foreign.json as { error: string }).error, "forbidden_origin");

    const own = await post(url, INIT, mcpHeaders({ ...auth, origin: gw.url }));
    assert.equal(own.status, 200);
    const configured = await post(
      url,
      INIT,
      mcpHeaders({ ...auth, origin: "https://app.example.com" }),
    );
    assert.equal(configured.status, 200);
    assert.equal(
      configured.headers.get("access-control-allow-origin"),
      "https://app.example.com",
    );
    for (const r of [own, configured]) {
      await fetch(url, {
        method: "DELETE",
        headers: { ...auth, "mcp-session-id": r.headers.get("mcp-session-id")! },
      });
    }
  });
});

Deno.test("malformed JSON, batches and non-JSON-RPC bodies get JSON-RPC errors", async () => {
  await withGateway(async (_gw, url) => {
    const headers = mcpHeaders(auth);
    const broken = await post(url, "{not json", headers);
    assert.equal(broken.status, 400);
    assert.equal((broken.json as { error: { code: number } }).error.code, -32700);

    const batch = await post(url, [INIT, INIT], headers);
    assert.equal(batch.status, 400);
    assert.match(
      (batch.json as { error: { message: string } }).error.message,
      /batches are not supported/,
    );

    const notRpc = await post(url, { hello: "world" }, headers);
    assert.equal(notRpc.status, 400);
    assert.equal((notRpc.json as { error: { code: number } }).error.code, -32600);

    // Bytes that are not UTF-8, then a good body: the shared decoder starts afresh each time.
    for (let i = 0; i < 2; i++) {
      const garbled = await fetch(url, {
        method: "POST",
        headers,
        body: new Uint8Array([0x7b, 0x22, 0xe2, 0x82, 0x22, 0x7d]),
      });
      assert.equal(garbled.status, 400);
      assert.deepEqual(await garbled.json(), {
        jsonrpc: "2.0",
        id: null,
        error: { code: -32700, message: "Parse error: the body is not valid UTF-8" },
      });
      // U+FFFD sent on purpose is UTF-8 like any other character.
      const replacement = {
        ...INIT,
        params: { ...INIT.params, clientInfo: { name: "a\uFFFDb", version: "1" } },
      };
      const good = await post(url, replacement, headers);
      assert.equal(good.status, 200, "a good body after a garbled one is read as it is");
    }

    const wrongType = await post(url, JSON.stringify(INIT), {
      ...headers,
      "content-type": "text/plain",
    });
    assert.equal(wrongType.status, 415);
  });
});

/** `[[…[1]…]]`, `depth` arrays deep. */
function nestedArrays(depth: number): string {
  return "[".repeat(depth) + "1" + "]".repeat(depth);
}

/** A tools/call of the minimal server's echo with `args` (JSON text) as its `arguments.deep`. */
function echoCall(id: number, args: string, meta = ""): string {
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo",` +
    `"arguments":{"deep":${args}}${meta}}}`;
}

/** Opens a legacy SSE session on `server`; its /message URL, and a way to hang up. */
async function legacySession(gw: TestGateway, server: string) {
  const stream = await fetch(`${gw.url}/${server}/sse`, {
    headers: { ...auth, accept: "text/event-stream" },
  });
  assert.equal(stream.status, 200);
  const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
  const readEndpoint = async () => {
    let seen = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the SSE stream ended before its endpoint event: ${seen}`);
      seen += value;
      const endpoint = /event: endpoint\ndata: (\S+)/.exec(seen)?.[1];
      if (endpoint) return endpoint;
    }
  };
  const endpoint = await within("the legacy SSE endpoint event", readEndpoint());
  return { url: new URL(endpoint, gw.url).href, close: () => reader.cancel() };
}

Deno.test("a body nested deeper than 128 levels gets 400 -32600 on every lane, and the gateway keeps serving", async () => {
  await withGateway(async (gw, url) => {
    const deep = nestedArrays(100_000);
    const refusal = (answer: { status: number; json: unknown }, lane: string) => {
      assert.equal(answer.status, 400, `${lane}: ${JSON.stringify(answer.json).slice(0, 300)}`);
      const error = (answer.json as { error: { code: number; message: string } }).error;
      assert.equal(error.code, -32600, lane);
      assert.match(error.message, /nests arrays and objects more than 128 levels deep/, lane);
    };
    // The session lane.
    const session = await openSession(url, auth);
    const inSession = mcpHeaders({ ...auth, "mcp-session-id": session });
    refusal(await post(url, echoCall(2, deep), inSession), "session lane");
    // As deep as the limit allows (the envelope takes 3 levels) is served.
    const allowed = await post(url, echoCall(3, nestedArrays(125)), inSession);
    assert.equal(allowed.status, 200, allowed.text);
    assert.ok(allowed.text.includes("[[[[1]]]]"), allowed.text.slice(0, 200));
    refusal(await post(url, echoCall(4, nestedArrays(126)), inSession), "one level past");

    // The stateless lane (MCP 2026-07-28).
    const meta = ',"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",' +
      '"io.modelcontextprotocol/clientCapabilities":{}}';
    const modern = mcpHeaders({
      ...auth,
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": "echo",
    });
    refusal(await post(url, echoCall(5, deep, meta), modern), "stateless lane");
    const served = await post(url, echoCall(6, "[1]", meta), modern);
    assert.equal(served.status, 200, served.text);

    // Legacy SSE's /message.
    const legacy = await legacySession(gw, "min");
    try {
      refusal(await post(legacy.url, echoCall(7, deep), mcpHeaders(auth)), "legacy /message");
    } finally {
      await legacy.close();
    }
    const health = await fetch(`${gw.url}/health`);
    assert.equal(health.status, 200);
    await health.body?.cancel();
  }, "{ maxMessageBytes: 1MiB }");
});

Deno.test("an oversized body gets 413 and the gateway keeps serving", async () => {
  await withGateway(async (_gw, url) => {
    const huge = { ...INIT, params: { ...INIT.params, padding: "x".repeat(100 * 1024) } };
    const tooBig = await post(url, huge, mcpHeaders(auth));
    assert.equal(tooBig.status, 413);
    assert.equal((tooBig.json as { error: string }).error, "payload_too_large");
    const session = await openSession(url, auth);
    assert.match(session, /^[0-9a-f]{32}$/);
    await fetch(url, { method: "DELETE", headers: { ...auth, "mcp-session-id": session } });
  });
});

Deno.test("sessions: missing id 400, unknown or ended id 404, bad protocol version 400", async () => {
  await withGateway(async (_gw, url) => {
    const list = { jsonrpc: "2.0", id: 2, method: "tools/list" };
    const noSession = await post(url, list, mcpHeaders(auth));
    assert.equal(noSession.status, 400);
    assert.match(JSON.stringify(noSession.json), /Mcp-Session-Id header is required/);

    const unknown = await post(
      url,
      list,
      mcpHeaders({ ...auth, "mcp-session-id": "f".repeat(32) }),
    );
    assert.equal(unknown.status, 404);

    const session = await openSession(url, auth);
    const ok = await post(url, list, mcpHeaders({ ...auth, "mcp-session-id": session }));
    assert.equal(ok.status, 200);
    assert.equal((ok.json as { result: { tools: unknown[] } }).result.tools.length, 2);

    const badVersion = await post(
      url,
      list,
      mcpHeaders({ ...auth, "mcp-session-id": session, "mcp-protocol-version": "1999-01-01" }),
    );
    assert.equal(badVersion.status, 400);
    assert.match(JSON.stringify(badVersion.json), /unsupported MCP-Protocol-Version/);

    const ended = await fetch(url, {
      method: "DELETE",
      headers: { ...auth, "mcp-session-id": session },
    });
    assert.equal(ended.status, 204);
    const after = await post(url, list, mcpHeaders({ ...auth, "mcp-session-id": session }));
    assert.equal(after.status, 404);
  });
});

Deno.test("another user's session id is treated as unknown", async () => {
  const gw = await startGateway(`
baseUrl: http://127.0.0.1:{{PORT}}
servers:
  min:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts"]
    serviceAuths: [{ type: bearer, tokens: ["alice-token-123", "bob-token-4567"] }]
`);
  try {
    const url = `${gw.url}/min/mcp`;
    const alice = await openSession(url, { authorization: "Bearer alice-token-123" });
    const stolen = await post(
      url,
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      mcpHeaders({ authorization: "Bearer bob-token-4567", "mcp-session-id": alice }),
    );
    assert.equal(stolen.status, 404);
  } finally {
    await gw.close();
  }
});

Deno.test("JSON responses when the client accepts only JSON; payloads pass unchanged", async () => {
  await withGateway(async (_gw, url) => {
    const session = await openSession(url, auth);
    const call = {
      jsonrpc: "2.0",
      id: "str-id",
      method: "tools/call",
      params: { name: "echo", arguments: { nested: { a: [1, 2] } }, _meta: { custom: "x" } },
    };
    const response = await post(url, call, {
      ...auth,
      "content-type": "application/json",
      accept: "application/json",
      "mcp-session-id": session,
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("content-type"), "application/json");
    assert.deepEqual(response.json, {
      jsonrpc: "2.0",
      id: "str-id",
      result: { content: [{ type: "text", text: '{"nested":{"a":[1,2]}}' }] },
    });
  });
});

Deno.test("sessions over limits.sessionsPerUser get 429 with Retry-After only while every one is busy; ending one frees a place", async () => {
  await withGateway(async (gw, url) => {
    const first = await openSession(url, auth);
    const second = await openSession(url, auth);
    // Both busy: each holds an open GET stream.
    const streams = await Promise.all([first, second].map((session) =>
      fetch(url, {
        headers: { ...auth, accept: "text/event-stream", "mcp-session-id": session },
      })
    ));
    try {
      assert.deepEqual(streams.map((stream) => stream.status), [200, 200]);
      const third = await post(url, INIT, mcpHeaders(auth));
      assert.equal(third.status, 429);
      assert.equal(third.headers.get("retry-after"), "60");
      assert.equal((third.json as { error: string }).error, "too_many_sessions");
      assert.match(
        (third.json as { error_description: string }).error_description,
        /limit 2, limits\.sessionsPerUser.*each has a request in flight or a stream open/,
      );
    } finally {
      await Promise.all(streams.map((stream) => stream.body?.cancel()));
    }
    await waitUntil(
      "both streams to be let go",
      () =>
        [first, second].every((id) => gw.gateway.sessions.get(id as SessionId)?.openStreams === 0),
    );
    const ended = await fetch(url, {
      method: "DELETE",
      headers: mcpHeaders({ ...auth, "mcp-session-id": first }),
    });
    await ended.body?.cancel();
    assert.equal(ended.status, 204);
    const fourth = await post(url, INIT, mcpHeaders(auth));
    assert.equal(fourth.status, 200);
    // The DELETE made the place: the other session was not ended for it.
    const list = { jsonrpc: "2.0", id: 2, method: "tools/list" };
    const stillThere = await post(url, list, mcpHeaders({ ...auth, "mcp-session-id": second }));
    assert.equal(stillThere.status, 200, stillThere.text);
  }, "{ sessionsPerUser: 2 }");
});

Deno.test("at limits.sessionsPerUser a new session ends the person's least recently used idle one", async () => {
  await withGateway(async (gw, url) => {
    const list = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/list" });
    const headers = (session: string) => mcpHeaders({ ...auth, "mcp-session-id": session });
    const older = await openSession(url, auth);
    const newer = await openSession(url, auth);
    // The older one is used after the newer one: the newer one is now the least recently used.
    assert.equal((await post(url, list(2), headers(older))).status, 200);
    // Neither session sent a DELETE (the SDK's close() and mcp-remote send none).
    const third = await post(url, INIT, mcpHeaders(auth));
    assert.equal(third.status, 200, third.text);
    const gone = await post(url, list(3), headers(newer));
    assert.equal(gone.status, 404, gone.text);
    assert.match(gone.text, /Session not found/);
    assert.equal((await post(url, list(4), headers(older))).status, 200);
    assert.equal(gw.gateway.sessions.size, 2);
    assert.ok(
      gw.logs.some((line) => line.includes('"session ended to make room"')),
      "the log says why the session ended",
    );
  }, "{ sessionsPerUser: 2 }");
});

Deno.test("every MCP answer carries the request id, the security headers and one access line, refused or not", async () => {
  await withGateway(async (gw, url) => {
    const given = await post(url, INIT, mcpHeaders({ ...auth, "x-request-id": "trace-42" }));
    assert.equal(given.status, 200);
    const refused = await post(url, INIT, mcpHeaders({ authorization: "Bearer wrong-token" }));
    assert.equal(refused.status, 401);
    const unknown = await post(`${gw.url}/nope/mcp`, INIT, mcpHeaders(auth));
    assert.equal(unknown.status, 404);
    // A percent-encoded name is decoded as before: the same server, the same answer.
    const encoded = await post(`${gw.url}/%6Din/mcp`, INIT, mcpHeaders(auth));
    assert.equal(encoded.status, 200);
    for (const answer of [given, refused, unknown, encoded]) {
      assert.equal(answer.headers.get("x-content-type-options"), "nosniff");
      assert.equal(answer.headers.get("x-frame-options"), "DENY");
      assert.match(answer.headers.get("content-security-policy") ?? "", /default-src 'none'/);
      assert.ok(answer.headers.get("x-request-id"));
    }
    assert.equal(given.headers.get("x-request-id"), "trace-42");
    const lines = gw.logs.map((line) => JSON.parse(line)).filter((l) => l.msg === "request");
    const traced = lines.filter((l) => l.requestId === "trace-42");
    assert.deepEqual(
      traced.map(({ method, path, status }) => ({ method, path, status })),
      [{ method: "POST", path: "/min/mcp", status: 200 }],
    );
    assert.ok(lines.some((l) => l.path === "/nope/mcp" && l.status === 404));
    assert.ok(lines.some((l) => l.path === "/min/mcp" && l.status === 401));
  });
});
