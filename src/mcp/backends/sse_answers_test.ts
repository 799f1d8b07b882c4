import assert from "node:assert/strict";
import { sleep, within } from "../../../tests/fixtures/waits.ts";
import { sseAnswersAsJson, SseEventReader } from "./sse_answers.ts";

const encoder = new TextEncoder();
const RESPONSE = '{"jsonrpc":"2.0","id":7,"result":{"content":[]}}';
const PROGRESS =
  '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}';

/** An SSE answer whose chunks the test releases one by one; the stream stays open after. */
function sseAnswer(chunks: string[], { end = true } = {}) {
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller): Promise<void> | void {
      if (pulled < chunks.length) return controller.enqueue(encoder.encode(chunks[pulled++]));
      if (end) return controller.close();
      return new Promise(() => {}); // open, silent
    },
  });
  return new Response(body, {
    headers: { "content-type": "text/event-stream", "mcp-session-id": "backend-1" },
  });
}

const post = { method: "POST", body: "{}" };

Deno.test("sseAnswersAsJson() hands over an SSE answer whose first message is the response as JSON", async () => {
  const fetch = sseAnswersAsJson(() =>
    Promise.resolve(
      sseAnswer(["id: 1-0\ndata: \n\n", `event: message\nid: 1-1\ndata: ${RESPONSE}\n\n`], {
        end: false,
      }),
    )
  );
  const answer = await fetch("http://backend/mcp", post);
  assert.equal(answer.headers.get("content-type"), "application/json");
  assert.equal(answer.headers.get("mcp-session-id"), "backend-1");
  assert.deepEqual(await answer.json(), JSON.parse(RESPONSE), "without waiting for the end");
});

Deno.test("sseAnswersAsJson() leaves a stream whose first message is not the response as it was", async () => {
  const chunks = [`data: ${PROGRESS}\n\n`, `data: ${RESPONSE}\n\n`];
  const fetch = sseAnswersAsJson(() => Promise.resolve(sseAnswer(chunks)));
  const answer = await fetch("http://backend/mcp", post);
  assert.equal(answer.headers.get("content-type"), "text/event-stream");
  assert.equal(await answer.text(), chunks.join(""));
});

Deno.test("sseAnswersAsJson() leaves GETs, JSON answers, errors and non-JSON data alone", async () => {
  const json = new Response(RESPONSE, { headers: { "content-type": "application/json" } });
  assert.equal(await sseAnswersAsJson(() => Promise.resolve(json))("http://b/mcp", post), json);
  const get = sseAnswer([`data: ${RESPONSE}\n\n`]);
  assert.equal(await sseAnswersAsJson(() => Promise.resolve(get))("http://b/mcp"), get);
  const garbage = await sseAnswersAsJson(() => Promise.resolve(sseAnswer(["data: {not json\n\n"])))(
    "http://b/mcp",
    post,
  );
  assert.equal(await garbage.text(), "data: {not json\n\n");
});

Deno.test("sseAnswersAsJson() hands a stream over once it has held maxHeldBytes without a message", async () => {
  // Comments for ever and no message: before, every byte was held while waiting for one.
  const comments = Array.from({ length: 100 }, () => `: ${"x".repeat(100)}\n\n`);
  const fetch = sseAnswersAsJson(
    () => Promise.resolve(sseAnswer(comments, { end: false })),
    1024,
  );
  const answer = await within("the stream to be handed over", fetch("http://backend/mcp", post));
  assert.equal(answer.headers.get("content-type"), "text/event-stream");
  const reader = answer.body!.getReader();
  const first = new TextDecoder().decode((await reader.read()).value);
  assert.equal(first, comments[0], "what was held comes first, as it came");
  await reader.cancel();
});

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
