import assert from "node:assert/strict";
import { ReadBuffer } from "./read_buffer.ts";

Deno.test("ReadBuffer.filled() doubles the buffer when a read fills it, up to its most", () => {
  const buffer = new ReadBuffer(1024, 4096);
  assert.equal(buffer.bytes.length, 1024);
  buffer.filled(1000);
  assert.equal(buffer.bytes.length, 1024, "a read that left room changes nothing");
  buffer.filled(1024);
  assert.equal(buffer.bytes.length, 2048);
  buffer.filled(2048);
  buffer.filled(4096);
  assert.equal(buffer.bytes.length, 4096, "never past its most");
});

Deno.test("ReadBuffer.filled() leaves the bytes of the last read as they were", () => {
  const buffer = new ReadBuffer(4, 8);
  const first = buffer.bytes;
  first.set([1, 2, 3, 4]);
  buffer.filled(4);
  assert.notEqual(buffer.bytes, first);
  assert.deepEqual([...first], [1, 2, 3, 4]);
});
