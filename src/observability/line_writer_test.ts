import assert from "node:assert/strict";
import { batchedLineWriter, FLUSH_AFTER_MS } from "./line_writer.ts";

const decoder = new TextDecoder();

function capture() {
  const writes: string[] = [];
  return { writes, sink: (bytes: Uint8Array) => writes.push(decoder.decode(bytes)) };
}

Deno.test("batchedLineWriter(): lines written together leave in one write, within the window", async () => {
  const { writes, sink } = capture();
  const write = batchedLineWriter(sink);
  write('{"msg":"one"}');
  write('{"msg":"two"}');
  assert.deepEqual(writes, [], "nothing is written at once");
  await new Promise((resolve) => setTimeout(resolve, FLUSH_AFTER_MS * 3));
  assert.deepEqual(writes, ['{"msg":"one"}\n{"msg":"two"}\n']);
});

Deno.test("batchedLineWriter(): flush() writes what waits, and a full buffer goes out at once", async () => {
  const { writes, sink } = capture();
  const write = batchedLineWriter(sink, 32);
  write("first");
  write.flush();
  assert.deepEqual(writes, ["first\n"]);
  write("x".repeat(40));
  assert.deepEqual(writes, ["first\n", `${"x".repeat(40)}\n`]);
  write.flush();
  assert.equal(writes.length, 2, "nothing left, nothing written");
  // The timer the first line scheduled finds nothing to write (the overflow wrote at once).
  await new Promise((resolve) => setTimeout(resolve, FLUSH_AFTER_MS * 3));
  assert.equal(writes.length, 2);
});
