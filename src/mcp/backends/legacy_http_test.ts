import assert from "node:assert/strict";
import { startHttpFixture } from "../../../tests/fixtures/fixture_server.ts";
import {
  backend,
  call,
  INIT,
  INITIALIZED,
  note,
  result,
  transport,
} from "../../../tests/fixtures/legacy_http_harness.ts";
import { waitUntil, within } from "../../../tests/fixtures/waits.ts";
import type { JSONRPCMessage } from "../../sdk.ts";
import { BackendAnswerError } from "./legacy_http_answers.ts";

Deno.test("LegacyHttp.send() passes JSON answers on and sends the session id, agreed version and configured headers", async () => {
  const server = await backend((_req, body) => {
    const { id, method } = JSON.parse(body);
    if (method === "initialize") {
      return Response.json(JSON.parse(result(id)), { headers: { "mcp-session-id": "s-1" } });
    }
    // A batch: a log message, then the response.
    return Response.json([JSON.parse(note(1)), JSON.parse(result(id, { tools: [] }))]);
  });
  const { http, messages, end } = transport(server.url);
  try {
    await http.start();
    await http.send(INIT);
    assert.equal(http.sessionId, "s-1");
    http.setProtocolVersion("2025-11-25");
    await http.send({ jsonrpc: "2.0", id: 1, method: "tools/list" } as JSONRPCMessage);
    assert.deepEqual(messages.map((m) => m.id ?? m.method), [
      0,
      "notifications/message",
      1,
    ]);
    const first = server.seen[0].headers;
    assert.equal(first.get("mcp-session-id"), null);
    assert.equal(first.get("mcp-protocol-version"), null);
    const later = server.seen[1].headers;
    assert.equal(later.get("mcp-session-id"), "s-1");
    assert.equal(later.get("mcp-protocol-version"), "2025-11-25");
    assert.equal(later.get("authorization"), "Bearer configured-secret");
    assert.equal(later.get("content-type"), "application/json");
    assert.equal(later.get("accept"), "application/json, text/event-stream");
  } finally {
    await end();
    await server.close();
  }
});

Deno.test("LegacyHttp.send() refuses a JSON answer that is not JSON-RPC, in words naming why", async () => {
  const server = await backend((_req, body) =>
    body.includes('"id":1')
      ? Response.json({ jsonrpc: "2.0", id: 1 })
      : new Response("{not json", { headers: { "content-type": "application/json" } })
  );
  const { http, messages, errors, end } = transport(server.url);
  try {
    await http.start();
    const shape = await http.send(call(1, "x")).catch((error) => error);
    assert.ok(shape instanceof BackendAnswerError);
    assert.match(shape.message, /not JSON-RPC 2\.0: a response must have "result" or "error"/);
    const syntax = await http.send(call(2, "x")).catch((error) => error);
    assert.ok(syntax instanceof SyntaxError);
    assert.deepEqual([messages.length, errors.length], [0, 2]);
  } finally {
    await end();
    await server.close();
  }
});

Deno.test("LegacyHttp.send() resolves on 202 for a notification or a response, passing nothing on", async () => {
  const server = await backend(() => new Response(null, { status: 202 }));
  const { http, messages, errors, end } = transport(server.url);
  try {
    await http.start();
    await http.send({ jsonrpc: "2.0", method: "notifications/cancelled" } as JSONRPCMessage);
    await http.send({ jsonrpc: "2.0", id: 9, result: {} } as JSONRPCMessage);
    assert.deepEqual([messages.length, errors.length, server.seen.length], [0, 0, 2]);
  } finally {
    await end();
    await server.close();
  }
});

Deno.test("LegacyHttp passes on an SSE answer's messages in order, a server request mid-call answered", async () => {
  const fixture = await startHttpFixture();
  const { http, messages, errors, end } = transport(new URL(fixture.url));
  try {
    await http.start();
    await http.send(INIT);
    http.setProtocolVersion("2025-11-25");
    await http.send(INITIALIZED);
    // Progress notifications come on the call's stream, before its result.
    await http.send(call(1, "test_tool_with_progress"));
    await waitUntil("the progress call's result", () => messages.some((m) => m.id === 1));
    const progress = messages.filter((m) => m.method === "notifications/progress");
    assert.deepEqual(progress.map((m) => m.params?.progress), [0, 50, 100]);
    assert.ok(messages.indexOf(progress[2]) < messages.findIndex((m) => m.id === 1));
    // The server asks the client mid-call; the answer goes back as a POST of its own.
    // The call's send settles at its stream's first event: the client can answer meanwhile.
    await within("the call to be sent", http.send(call(2, "test_elicitation", { message: "?" })));
    await waitUntil(
      "the elicitation request",
      () => messages.some((m) => m.method === "elicitation/create"),
    );
    const asked = messages.find((m) => m.method === "elicitation/create")!;
    await http.send({
      jsonrpc: "2.0",
      id: asked.id,
      result: { action: "accept", content: { username: "ada", email: "ada@example.com" } },
    } as JSONRPCMessage);
    await waitUntil("the elicitation call's result", () => messages.some((m) => m.id === 2));
    const answered = messages.find((m) => m.id === 2)!;
    assert.match(JSON.stringify(answered.result), /ada@example\.com/);
    assert.deepEqual(errors, []);
  } finally {
    await end();
    await fixture.close();
  }
});

Deno.test("LegacyHttp takes up a POST's answer the server closed (SEP-1699) on a GET after the last event id", async () => {
  const fixture = await startHttpFixture();
  const { http, messages, errors, end } = transport(new URL(fixture.url));
  try {
    await http.start();
    await http.send(INIT);
    http.setProtocolVersion("2025-11-25");
    await http.send(call(1, "test_reconnection"));
    await waitUntil(
      "the result after the stream was closed",
      () => messages.some((m) => m.id === 1),
    );
    const answer = messages.find((m) => m.id === 1)!;
    assert.match(JSON.stringify(answer.result), /Reconnection test completed/);
    assert.deepEqual(errors, []);
  } finally {
    await end();
    await fixture.close();
  }
});

Deno.test("LegacyHttp follows a redirect within the backend's origin, and names one it does not follow", async () => {
  const elsewhere = "http://192.0.2.1:9/mcp?token=hidden";
  const server = await backend((req, body) => {
    const path = new URL(req.url).pathname;
    if (path === "/old") return new Response(null, { status: 307, headers: { location: "/mcp" } });
    if (path === "/away") {
      return new Response(null, { status: 308, headers: { location: elsewhere } });
    }
    return Response.json(JSON.parse(result(JSON.parse(body).id)));
  });
  const moved = transport(new URL("/old", server.url));
  const away = transport(new URL("/away", server.url));
  try {
    await moved.http.start();
    await moved.http.send(INIT);
    assert.deepEqual(moved.messages.map((m) => m.id), [0]);
    assert.deepEqual(server.seen.map((s) => s.body === "" ? "" : JSON.parse(s.body).id), [0, 0]);
    await away.http.start();
    const refused = await away.http.send(INIT).catch((error) => error);
    assert.equal(refused.code, 308);
    assert.match(
      refused.message,
      /redirects to http:\/\/192\.0\.2\.1:9\/mcp, which the gateway does not follow/,
    );
    assert.equal(server.seen.length, 3, "nothing was sent to the other origin");
  } finally {
    await moved.end();
    await away.end();
    await server.close();
  }
});
