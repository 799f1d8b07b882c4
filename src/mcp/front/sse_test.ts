import assert from "node:assert/strict";
import { formatEvent, KEEPALIVE_MS, SseWriter } from "./sse.ts";
import { systemClock } from "../../core/clock.ts";
import { testClock } from "../../../tests/fixtures/clock.ts";
import { within } from "../../../tests/fixtures/waits.ts";

const decoder = new TextDecoder();

async function readAll(body: ReadableStream<Uint8Array>): Promise<string> {
  let text = "";
  for await (const chunk of body) text += decoder.decode(chunk);
  return text;
}

Deno.test("formatEvent() writes each data line on its own line", () => {
  assert.equal(
    formatEvent({ id: "1-2", event: "message", data: "a\nb" }),
    "id: 1-2\nevent: message\ndata: a\ndata: b\n\n",
  );
});

Deno.test("SseWriter.close() delivers what was queued before ending the stream", async () => {
  const writer = new SseWriter(1_000, systemClock);
  writer.write({ data: "one" });
  writer.write({ data: "two" });
  writer.close();
  assert.equal(writer.open, false);
  assert.equal(writer.write({ data: "late" }), false);
  assert.equal(await readAll(writer.body), "data: one\n\ndata: two\n\n");
  assert.equal(await writer.closed, "closed");
});

Deno.test("SseWriter.write() ends the stream and drops the queue past maxBufferedBytes", async () => {
  const writer = new SseWriter(100, systemClock);
  assert.equal(writer.write({ data: "x".repeat(50) }), true);
  assert.equal(writer.write({ data: "y".repeat(50) }), false);
  assert.equal(await writer.closed, "overflow");
  assert.equal(await readAll(writer.body), "");
});

Deno.test("SseWriter hands chunks straight to a waiting reader without queueing them", async () => {
  const writer = new SseWriter(100, systemClock);
  const reader = writer.body.getReader();
  const next = reader.read();
  await Promise.resolve();
  // Larger than the buffer, but the client is reading: nothing waits, nothing is cut.
  assert.equal(writer.write({ data: "z".repeat(200) }), true);
  assert.equal(decoder.decode((await next).value).length, 208);
  await reader.cancel();
  assert.equal(await writer.closed, "client_gone");
});

Deno.test("SseWriter sends a keep-alive comment each KEEPALIVE_MS of its clock and stops when closed", async () => {
  const clock = testClock();
  clock.freeze();
  const writer = new SseWriter(1_000, clock);
  const reader = writer.body.getReader();
  clock.advance(KEEPALIVE_MS - 1);
  writer.write({ data: "first" });
  assert.equal(decoder.decode((await reader.read()).value), "data: first\n\n");
  clock.advance(1);
  const keepAlive = await within("the keep-alive on the clock", reader.read(), 2_000);
  assert.equal(decoder.decode(keepAlive.value), ": keep-alive\n\n");
  writer.close();
  assert.equal(clock.pending, 0);
  assert.equal((await reader.read()).done, true);
});

Deno.test("SseWriter: streams on one clock share one keep-alive timer; each gets its comment until it closes", async () => {
  const clock = testClock();
  clock.freeze();
  const first = new SseWriter(1_000, clock);
  const second = new SseWriter(1_000, clock);
  assert.equal(clock.pending, 1, "one timer for both");
  const readers = [first.body.getReader(), second.body.getReader()];
  clock.advance(KEEPALIVE_MS);
  for (const reader of readers) {
    const keepAlive = await within("the keep-alive on the clock", reader.read(), 2_000);
    assert.equal(decoder.decode(keepAlive.value), ": keep-alive\n\n");
  }
  first.close();
  assert.equal((await readers[0].read()).done, true);
  assert.equal(clock.pending, 1, "the other stream still needs it");
  clock.advance(KEEPALIVE_MS);
  const again = await within("the second stream's next keep-alive", readers[1].read(), 2_000);
  assert.equal(decoder.decode(again.value), ": keep-alive\n\n");
  second.close();
  assert.equal(clock.pending, 0, "no stream, no timer");
  // A stream opened later starts the timer again.
  const third = new SseWriter(1_000, clock);
  assert.equal(clock.pending, 1);
  third.close();
  assert.equal(clock.pending, 0);
});
