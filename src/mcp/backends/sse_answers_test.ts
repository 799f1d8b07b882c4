import assert from "node:assert/strict";
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

Deno.test("SseEventReader splits events across chunks and line endings, skipping comments and empty data", () => {
  const reader = new SseEventReader();
  assert.deepEqual(reader.push(": keep-alive\r\n\r\nevent: message\r\ndata: a"), []);
  assert.deepEqual(reader.push("bc\r\ndata: def\r"), []);
  assert.deepEqual(reader.push("\n\r\nid: 3\ndata:\n\nevent: other\ndata:x\n\n"), [
    { event: "message", data: "abc\ndef" },
    { event: "other", data: "x" },
  ]);
});
