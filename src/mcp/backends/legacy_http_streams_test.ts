import assert from "node:assert/strict";
import { testClock } from "../../../tests/fixtures/clock.ts";
import {
  backend,
  call,
  INIT,
  INITIALIZED,
  note,
  openStream,
  result,
  sse,
  transport,
} from "../../../tests/fixtures/legacy_http_harness.ts";
import { waitUntil } from "../../../tests/fixtures/waits.ts";
import type { StreamableHTTPError } from "../../sdk.ts";
import { AnswerTooLargeError, SSE_FRAMING_BYTES } from "./bounded_answers.ts";

Deno.test("LegacyHttp reopens the GET stream when it ends, after the clock's wait, with Last-Event-ID", async () => {
  const clock = testClock();
  clock.freeze();
  const streams = [openStream(), openStream()];
  let gets = 0;
  const server = await backend((req) => {
    if (req.method === "GET") return streams[gets++].response();
    return new Response(null, { status: 202 });
  });
  const { http, messages, errors, end } = transport(server.url, { clock });
  try {
    await http.start();
    await http.send(INITIALIZED);
    await waitUntil("the GET stream to open", () => gets === 1);
    streams[0].write(`id: e-1\ndata: ${note(1)}\n\n`);
    await waitUntil("the first notification", () => messages.length === 1);
    streams[0].end();
    await waitUntil("a reconnection to be scheduled", () => clock.pending === 1);
    assert.equal(gets, 1, "not before the wait");
    clock.advance(1_000);
    await waitUntil("the GET stream to open again", () => gets === 2);
    const again = server.seen.filter((s) => s.method === "GET")[1].headers;
    assert.equal(again.get("last-event-id"), "e-1");
    assert.equal(again.get("accept"), "text/event-stream");
    streams[1].write(`id: e-2\ndata: ${note(2)}\n\n`);
    await waitUntil("the second notification", () => messages.length === 2);
    assert.deepEqual(messages.map((m) => m.params?.n), [1, 2]);
    assert.deepEqual(errors, []);
  } finally {
    await end();
    await server.close();
  }
  assert.equal(clock.pending, 0, "closing stops the reconnections");
});

Deno.test("LegacyHttp takes 405 for no GET stream, and gives up reopening one after two refusals", async () => {
  const clock = testClock();
  clock.freeze();
  for (const status of [405, 500]) {
    const stream = openStream();
    let gets = 0;
    const server = await backend((req) => {
      if (req.method !== "GET") return new Response(null, { status: 202 });
      if (status === 405 || ++gets > 1) return new Response("no", { status });
      return stream.response();
    });
    const { http, errors, end } = transport(server.url, { clock });
    try {
      await http.start();
      await http.send(INITIALIZED);
      if (status === 405) {
        await waitUntil("the GET to be refused", () => server.seen.length === 2);
        assert.deepEqual([errors, clock.pending], [[], 0], "405 is no error");
        continue;
      }
      await waitUntil("the GET stream to open", () => gets === 1);
      stream.end();
      for (const wait of [1_000, 1_500]) {
        await waitUntil("a reconnection to be scheduled", () => clock.pending === 1);
        clock.advance(wait);
      }
      await waitUntil("the reconnections to give up", () => errors.length === 5);
      assert.deepEqual(errors.map((e) => e.message), [
        "Streamable HTTP error: Failed to open SSE stream: Internal Server Error",
        "Failed to reconnect SSE stream: Streamable HTTP error: Failed to open SSE stream: Internal Server Error",
        "Streamable HTTP error: Failed to open SSE stream: Internal Server Error",
        "Failed to reconnect SSE stream: Streamable HTTP error: Failed to open SSE stream: Internal Server Error",
        "Maximum reconnection attempts (2) exceeded.",
      ]);
      assert.equal((errors[0] as StreamableHTTPError).code, 500);
      assert.equal(clock.pending, 0);
    } finally {
      await end();
      await server.close();
    }
  }
});

Deno.test("LegacyHttp holds answers to limits.maxMessageBytes: a JSON answer, a POST's event, a GET stream's event", async () => {
  // Past the limit and the room an event has for its SSE fields (SSE_FRAMING_BYTES).
  const big = "x".repeat(1024 + SSE_FRAMING_BYTES);
  const stream = openStream();
  const server = await backend((req, body) => {
    if (req.method === "GET") return stream.response();
    const { id, method } = JSON.parse(body);
    if (id === undefined) return new Response(null, { status: 202 });
    if (method === "initialize") return Response.json(JSON.parse(result(id)));
    if (id === 1) return Response.json(JSON.parse(result(id, { big })));
    return sse(`data: ${note(1)}\n\ndata: ${result(id, { big })}\n\n`);
  });
  const { http, messages, oversized, end } = transport(server.url, { maxMessageBytes: 1024 });
  try {
    await http.start();
    await http.send(INIT);
    const json = await http.send(call(1, "big")).catch((error) => error);
    assert.ok(json instanceof AnswerTooLargeError);
    assert.match(json.message, /larger than limits\.maxMessageBytes \(1 KiB\)/);
    // The oversized event ends the call's stream: the call gets an error naming the limit.
    await http.send(call(2, "big"));
    await waitUntil("the call's error", () => messages.some((m) => m.id === 2));
    const failed = messages.find((m) => m.id === 2)!;
    assert.equal(failed.error?.code, -32000);
    assert.match(failed.error!.message, /larger than limits\.maxMessageBytes \(1 KiB\)/);
    // On the GET stream the event is dropped and the stream goes on.
    await http.send(INITIALIZED);
    stream.write(`data: ${note(big.length)}${big}\n\ndata: ${note(3)}\n\n`);
    await waitUntil(
      "the notification after the dropped event",
      () => messages.some((m) => m.params?.n === 3),
    );
    assert.equal(oversized.length, 3);
    assert.match(oversized[2], /^dropped an event from the backend: /);
  } finally {
    await end();
    await server.close();
  }
});

Deno.test("LegacyHttp fails a call whose SSE answer breaks or ends without its response", async () => {
  const streams = [openStream(), openStream(), openStream()];
  let posts = 0;
  const server = await backend(() => streams[posts++].response());
  const { http, messages, errors, end } = transport(server.url);
  try {
    await http.start();
    // Broken before a word: the send itself fails, as a request that could not be sent.
    const sending = http.send(call(1, "x"));
    await waitUntil("the first answer to start", () => posts === 1);
    streams[0].write('data: {"jsonrpc":');
    streams[0].fail();
    const broken = await sending.catch((error) => error);
    assert.ok(broken instanceof Error);
    assert.match(broken.message, /connection/);
    // Broken after a notification: the call gets an error, and the failure is reported.
    const second = http.send(call(2, "x"));
    await waitUntil("the second answer to start", () => posts === 2);
    streams[1].write(`data: ${note(1)}\n\n`);
    await second;
    streams[1].fail();
    await waitUntil("the second call's error", () => messages.some((m) => m.id === 2));
    assert.match(
      messages.find((m) => m.id === 2)!.error!.message,
      /^could not reach the backend: /,
    );
    assert.ok(errors.some((e) => /SSE stream disconnected/.test(e.message)));
    // Ended without the response (and no event id to resume after): the call gets an error.
    const third = http.send(call(3, "x"));
    await waitUntil("the third answer to start", () => posts === 3);
    streams[2].write(`data: ${note(2)}\n\n`);
    await third;
    streams[2].end();
    await waitUntil("the third call's error", () => messages.some((m) => m.id === 3));
    assert.equal(
      messages.find((m) => m.id === 3)!.error!.message,
      "the backend ended its answer without responding",
    );
  } finally {
    await end();
    await server.close();
  }
});
