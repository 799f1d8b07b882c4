import assert from "node:assert/strict";
import { chunksOf, LineTooLongError, readLines } from "./lines.ts";

function streamOf(...chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return ReadableStream.from(chunks.map((c) => encoder.encode(c)));
}

async function collect(stream: ReadableStream<Uint8Array>, max: number, truncate = false) {
  const lines: string[] = [];
  for await (const line of readLines(stream, max, { truncate })) lines.push(line);
  return lines;
}

Deno.test("readLines() joins lines split across chunks and strips CR", async () => {
  assert.deepEqual(await collect(streamOf('{"a":', '1}\r\n{"b"', ":2}\n", "tail"), 100), [
    '{"a":1}',
    '{"b":2}',
    "tail",
  ]);
});

Deno.test("readLines() throws on a line longer than the limit, even without a newline", async () => {
  await assert.rejects(collect(streamOf("x".repeat(50)), 10), LineTooLongError);
});

Deno.test("readLines() with truncate cuts long lines and carries on", async () => {
  assert.deepEqual(await collect(streamOf("x".repeat(25), "yy\nok\n"), 10, true), [
    "x".repeat(10),
    "ok",
  ]);
});

Deno.test("chunksOf() reads a byte stream into a small buffer that doubles when a read fills it", async () => {
  const data = new Uint8Array(10_000).map((_, i) => i % 251);
  let offered = 0;
  const stream: ReadableStream<Uint8Array> = new ReadableStream({
    type: "bytes",
    pull(controller: ReadableByteStreamController) {
      const request = controller.byobRequest!;
      const view = request.view as Uint8Array;
      const n = Math.min(view.byteLength, data.length - offered);
      if (n === 0) {
        controller.close();
        request.respond(0);
        return;
      }
      view.set(data.subarray(offered, offered + n));
      offered += n;
      request.respond(n);
    },
  });
  const sizes: number[] = [];
  const seen: number[] = [];
  for await (const chunk of chunksOf(stream)) {
    sizes.push(chunk.byteLength);
    seen.push(...chunk);
  }
  assert.deepEqual(sizes, [1024, 2048, 4096, 2832]);
  assert.deepEqual(seen, [...data]);
});

Deno.test("chunksOf() passes a stream that is not a byte stream on as it is", async () => {
  const chunks = [new Uint8Array([1, 2]), new Uint8Array([3])];
  const stream = ReadableStream.from(chunks);
  const seen: Uint8Array[] = [];
  for await (const chunk of chunksOf(stream)) seen.push(chunk);
  assert.deepEqual(seen, chunks);
});

Deno.test("readLines() with onTooLong skips a long line, hears its ends, and carries on", async () => {
  const skipped: [string, string][] = [];
  const lines: string[] = [];
  const stream = streamOf(
    '{"result":',
    "y".repeat(30),
    "z".repeat(30),
    ',"id":7}\nok\n',
    "x".repeat(12) + "\n",
  );
  const onTooLong = (head: string, tail: string) => skipped.push([head, tail]);
  for await (const line of readLines(stream, 10, { onTooLong })) lines.push(line);
  assert.deepEqual(lines, ["ok"]);
  assert.equal(skipped.length, 2);
  assert.ok(skipped[0][0].startsWith('{"result":'), "the head is the line's start");
  assert.ok(skipped[0][1].endsWith(',"id":7}'), "the tail is the line's end");
  assert.deepEqual(skipped[1], ["x".repeat(12), "x".repeat(12)]);
});
