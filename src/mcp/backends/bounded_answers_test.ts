import assert from "node:assert/strict";
import {
  AnswerTooLargeError,
  answerTooLargeMessage,
  boundedAnswers,
  describeSize,
  SSE_FRAMING_BYTES,
} from "./bounded_answers.ts";

const encoder = new TextEncoder();
const MAX = 1024;
const REQUEST = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: {} });

/** A body that hands out `chunk` on every pull, `times` times (for ever without), and counts. */
function endless(chunk: string, times = Infinity) {
  const bytes = encoder.encode(chunk);
  const stats = { pulled: 0, cancelled: false };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (stats.pulled >= times) return controller.close();
      stats.pulled++;
      controller.enqueue(bytes);
    },
    cancel() {
      stats.cancelled = true;
    },
  }, { highWaterMark: 0 });
  return { body, stats };
}

function fetchOf(response: Response): typeof fetch {
  return () => Promise.resolve(response);
}

Deno.test("describeSize() names whole MiB and KiB, and bytes otherwise", () => {
  assert.equal(describeSize(4 * 1_048_576), "4 MiB");
  assert.equal(describeSize(512 * 1024), "512 KiB");
  assert.equal(describeSize(1_000_000), "1000000 bytes");
});

Deno.test("boundedAnswers() hands back an answer with a declared length within the limit as it came", async () => {
  const response = new Response("{}", { headers: { "content-length": "2" } });
  const fetch = boundedAnswers(fetchOf(response), {
    maxMessageBytes: MAX,
    oversizedEvents: "skip",
  });
  assert.equal(await fetch("http://b/mcp", { method: "POST", body: REQUEST }), response);
  await response.body?.cancel();
});

Deno.test("boundedAnswers() refuses a declared length past the limit without reading the body", async () => {
  const { body, stats } = endless("x");
  const told: string[] = [];
  const fetch = boundedAnswers(
    fetchOf(new Response(body, { headers: { "content-length": String(MAX + 1) } })),
    { maxMessageBytes: MAX, oversizedEvents: "skip", onOversized: (m) => told.push(m) },
  );
  await assert.rejects(fetch("http://b/mcp", { method: "POST", body: REQUEST }), (error) => {
    assert.ok(error instanceof AnswerTooLargeError);
    assert.equal(error.message, answerTooLargeMessage(MAX));
    return true;
  });
  assert.equal(stats.pulled, 0);
  assert.equal(stats.cancelled, true, "the connection is let go");
  assert.deepEqual(told, [answerTooLargeMessage(MAX)]);
});

Deno.test("boundedAnswers() stops reading an endless or decompressed body once past the limit", async () => {
  const cases: Record<string, string>[] = [{}, {
    "content-encoding": "gzip",
    "content-length": "10",
  }];
  for (const headers of cases) {
    const { body, stats } = endless("x".repeat(100));
    const fetch = boundedAnswers(
      fetchOf(new Response(body, { headers: { "content-type": "application/json", ...headers } })),
      { maxMessageBytes: MAX, oversizedEvents: "skip" },
    );
    const answer = await fetch("http://b/mcp", { method: "POST", body: REQUEST });
    await assert.rejects(answer.json(), (error: Error) => {
      assert.ok(error instanceof AnswerTooLargeError);
      assert.match(error.message, /larger than limits\.maxMessageBytes \(1 KiB\)/);
      assert.equal(error.message.includes("once decompressed"), "content-encoding" in headers);
      return true;
    });
    assert.ok(stats.pulled <= MAX / 100 + 2, `read ${stats.pulled} chunks of an endless body`);
    assert.equal(stats.cancelled, true);
  }
});

const sse = (body: ReadableStream<Uint8Array>) =>
  new Response(body, { headers: { "content-type": "text/event-stream" } });

Deno.test("boundedAnswers() answers a POSTed request with a JSON-RPC error when its SSE answer has an event past the limit", async () => {
  const { body, stats } = endless(`data: ${"x".repeat(500)}`);
  const fetch = boundedAnswers(fetchOf(sse(body)), {
    maxMessageBytes: MAX,
    oversizedEvents: "skip",
  });
  const answer = await fetch("http://b/mcp", { method: "POST", body: REQUEST });
  const text = await answer.text();
  assert.equal(
    text,
    `event: message\ndata: ${
      JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        error: { code: -32000, message: answerTooLargeMessage(MAX) },
      })
    }\n\n`,
  );
  assert.ok(stats.pulled * 506 <= MAX + SSE_FRAMING_BYTES + 506, "read no further than the limit");
  assert.equal(stats.cancelled, true);
});

Deno.test("boundedAnswers() drops an oversized event from a stream that answers no request, and goes on", async () => {
  const big = `data: ${"x".repeat(MAX + SSE_FRAMING_BYTES)}\n\n`;
  const { body } = endless(`data: a\n\n${big}data: b\n\n`, 1);
  const told: string[] = [];
  const fetch = boundedAnswers(fetchOf(sse(body)), {
    maxMessageBytes: MAX,
    oversizedEvents: "skip",
    onOversized: (m) => told.push(m),
  });
  assert.equal(await (await fetch("http://b/mcp")).text(), "data: a\n\ndata: b\n\n");
  assert.deepEqual(told, [`dropped an event from the backend: ${answerTooLargeMessage(MAX)}`]);
});

/** `text` handed out `size` bytes at a time. */
function chunked(text: string, size: number): ReadableStream<Uint8Array> {
  const bytes = encoder.encode(text);
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.subarray(at, at += size));
    },
  }, { highWaterMark: 0 });
}

Deno.test("boundedAnswers() answers the request a dropped legacy SSE event was for, and the stream goes on", async () => {
  const filler = "x".repeat(MAX + SSE_FRAMING_BYTES);
  const answerFirst =
    `event: message\ndata: {"jsonrpc":"2.0","id":7,"result":{"t":"${filler}"}}\n\n`;
  const idLast =
    `event: message\ndata: {"result":{"t":"${filler}"},"jsonrpc":"2.0","id":"s-9"}\n\n`;
  // A backend's own request has an id of another numbering: never taken for an answer.
  const request =
    `event: message\ndata: {"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"t":"${filler}"}}\n\n`;
  const stream = `data: a\n\n${answerFirst}data: b\n\n${idLast}${request}data: c\n\n`;
  const error = (id: number | string) =>
    `event: message\ndata: ${
      JSON.stringify({
        jsonrpc: "2.0",
        id,
        error: { code: -32000, message: answerTooLargeMessage(MAX) },
      })
    }\n\n`;
  for (const size of [1, 100, 4096, stream.length]) {
    const told: string[] = [];
    const fetch = boundedAnswers(fetchOf(sse(chunked(stream, size))), {
      maxMessageBytes: MAX,
      oversizedEvents: "answer",
      onOversized: (m) => told.push(m),
    });
    const text = await (await fetch("http://b/sse")).text();
    assert.equal(
      text,
      `data: a\n\n${error(7)}data: b\n\n${error("s-9")}data: c\n\n`,
      `chunks of ${size}`,
    );
    assert.equal(told.length, 3, told.join("\n"));
    assert.match(told[2], /dropped an event from the backend that answers no request it names/);
  }
});
