import assert from "node:assert/strict";
import type { JSONRPCMessage } from "../../sdk.ts";
import { Deadlines } from "../../core/deadlines.ts";
import { systemClock } from "../../core/clock.ts";
import { testClock } from "../../../tests/fixtures/clock.ts";
import { within } from "../../../tests/fixtures/waits.ts";
import { SseWriter } from "./sse.ts";
import { StreamableChannel } from "./streamable_channel.ts";

/** A channel whose JSON window runs on a frozen clock: time passes only when a test says so. */
function newChannel(maxBufferedBytes: number) {
  const clock = testClock();
  clock.freeze();
  // A resolution of 1 ms, so a window of a few milliseconds is told apart from a shorter one.
  const deadlines = new Deadlines(clock, 1);
  return { channel: new StreamableChannel(maxBufferedBytes, deadlines), clock, deadlines };
}

const answer = (id: number, text = "ok") =>
  ({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text }] } }) as JSONRPCMessage;

Deno.test("StreamableChannel keeps the logs of 16 finished streams, however many requests it answers", () => {
  const { channel } = newChannel(1_048_576);
  for (let id = 1; id <= 5_000; id++) {
    const writer = new SseWriter(1_048_576, systemClock);
    channel.openRequestStream(id, writer, true);
    channel.deliver(answer(id), id);
    // The client read its answer and the stream ended.
    void writer.body.cancel();
  }
  const { events, streams } = channel.logged;
  assert.ok(streams <= 17, `${streams} streams kept`);
  assert.ok(events <= 17, `${events} events kept`);
  channel.ended("test over");
});

Deno.test("StreamableChannel bounds the replay log in bytes, dropping the oldest stream's events first", async () => {
  const { channel } = newChannel(64 * 1024);
  const first = new SseWriter(64 * 1024, systemClock);
  channel.openRequestStream(1, first, false);
  const second = new SseWriter(64 * 1024, systemClock);
  channel.openRequestStream(2, second, false);
  const note = (i: number) =>
    ({
      jsonrpc: "2.0",
      method: "notifications/message",
      params: { level: "info", data: `${i}`.padEnd(1_000) },
    }) as JSONRPCMessage;
  for (let i = 0; i < 20; i++) channel.deliver(note(i), 1);
  for (let i = 0; i < 20; i++) channel.deliver(note(i), 2);
  const { bytes, events } = channel.logged;
  assert.ok(bytes <= 32 * 1024, `${bytes} bytes kept`);
  assert.ok(events < 40);
  // The second stream can still be replayed whole: the first stream's events went first.
  const resumed = new SseWriter(64 * 1024, systemClock);
  assert.equal(channel.resume("2-0", resumed), true);
  const reader = resumed.body.getReader();
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) {
    const chunk = new TextDecoder().decode((await reader.read()).value);
    ids.push(/^id: (\S+)/.exec(chunk)![1]);
  }
  assert.deepEqual(ids, Array.from({ length: 20 }, (_, i) => `2-${i + 1}`));
  await reader.cancel();
  channel.ended("test over");
});

const progress = (token: number) =>
  ({
    jsonrpc: "2.0",
    method: "notifications/progress",
    params: { progressToken: token, progress: 1 },
  }) as JSONRPCMessage;

async function readAll(writer: SseWriter): Promise<string> {
  return await new Response(writer.body).text();
}

Deno.test("answerFirst() answers JSON when the response is the first message for the request", async () => {
  const { channel } = newChannel(1_048_576);
  const first = channel.answerFirst(7, true);
  channel.deliver(answer(7, "quick"), 7);
  assert.deepEqual(await first, { json: answer(7, "quick") });
  assert.equal(channel.logged.streams, 0, "no stream, no replay log");
  channel.ended("test over");
});

Deno.test("answerFirst() opens a primed SSE stream when a notification comes first, and carries the rest", async () => {
  const { channel } = newChannel(1_048_576);
  const first = channel.answerFirst(8, true);
  channel.deliver(progress(8), 8);
  const answered = await first;
  assert.ok("stream" in answered);
  channel.deliver(answer(8, "after progress"), 8);
  const text = await readAll(answered.stream);
  assert.match(text, /^id: 1-0\nretry: 1000\ndata: \n\n/, "primed for resumption");
  assert.ok(text.indexOf("notifications/progress") < text.indexOf("after progress"));
  channel.ended("test over");
});

Deno.test("answerFirst() opens the stream after the window when nothing has come, so the client sees life", async () => {
  const { channel, clock, deadlines } = newChannel(1_048_576);
  let opened = false;
  const first = channel.answerFirst(9, false, 10);
  void first.then(() => opened = true);
  clock.advance(9);
  await Promise.resolve();
  assert.equal(opened, false, "not before the window has passed");
  clock.advance(1 + deadlines.resolutionMs);
  const answered = await within("the stream to open once the window has passed", first, 1_000);
  assert.ok("stream" in answered);
  channel.deliver(answer(9, "slow"), 9);
  assert.match(await readAll(answered.stream), /"slow"/);
  channel.ended("test over");
});

Deno.test("answerFirst() gives a message for no request to a waiting POST when no stream is open", async () => {
  const { channel } = newChannel(1_048_576);
  const first = channel.answerFirst(10, false);
  const log = { jsonrpc: "2.0", method: "notifications/message", params: { level: "info" } };
  channel.deliver(log as JSONRPCMessage);
  const answered = await first;
  assert.ok("stream" in answered);
  channel.deliver(answer(10), 10);
  assert.match(await readAll(answered.stream), /notifications\/message[\s\S]*"id":10/);
  channel.ended("test over");
});

Deno.test("answerFirst() answers the session's end as a JSON-RPC error", async () => {
  const { channel } = newChannel(1_048_576);
  const first = channel.answerFirst(11, false);
  channel.ended("the backend closed the connection");
  const answered = await first;
  assert.ok("json" in answered);
  assert.match(JSON.stringify(answered.json), /the backend closed the connection/);
});
