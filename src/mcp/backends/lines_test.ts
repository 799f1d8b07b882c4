import assert from "node:assert/strict";
import { LineTooLongError, readLines } from "./lines.ts";

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
