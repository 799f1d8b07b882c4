import assert from "node:assert/strict";
import { sleep } from "../../../tests/fixtures/waits.ts";
import { SseEventReader } from "./sse_answers.ts";

Deno.test("SseEventReader splits events across chunks and line endings, skipping comments and empty data", () => {
  const reader = new SseEventReader();
  assert.deepEqual(reader.push(": keep-alive\r\n\r\nevent: message\r\ndata: a"), []);
  assert.deepEqual(reader.push("bc\r\ndata: def\r"), []);
  assert.deepEqual(reader.push("\n\r\nid: 3\ndata:\n\nevent: other\ndata:x\n\n"), [
    { event: "message", data: "abc\ndef" },
    { event: "other", data: "x" },
  ]);
});

Deno.test("SseEventReader.push() reads one 8 MiB event arriving in 64-byte chunks in linear time", async () => {
  // Appending each chunk to what is pending and searching it all again from the start (the
  // quadratic way) would scan about 512 GiB here: the test would not end within the watchdog's
  // limit. It yields now and then so that the watchdog can fail it by name.
  const size = 8 * 1024 * 1024;
  const chunk = "x".repeat(64);
  const reader = new SseEventReader();
  assert.deepEqual(reader.push("event: message\ndata: "), []);
  for (let sent = 0; sent < size; sent += chunk.length) {
    assert.deepEqual(reader.push(chunk), []);
    if (sent % (64 * 1024) === 0) await sleep(0);
  }
  const events = reader.push("\n\n");
  assert.equal(events.length, 1);
  assert.equal(events[0].data.length, size);
});

Deno.test("SseEventReader keeps the last event id, a priming event's included, and the retry time", () => {
  const reader = new SseEventReader();
  assert.deepEqual(reader.push("id: p-0\nretry: 250\ndata: \n\n"), []);
  assert.deepEqual([reader.lastEventId, reader.retry], ["p-0", 250]);
  // An id counts once its event is complete; one with a NUL in it, or a bad retry, is ignored.
  reader.push("id: p-1\ndata: {}\n");
  assert.equal(reader.lastEventId, "p-0");
  reader.push("\nid: bad\0id\nretry: soon\ndata: {}\n\n");
  assert.deepEqual([reader.lastEventId, reader.retry], ["p-1", 250]);
});
