import assert from "node:assert/strict";
import { BoundedQueue } from "./bounded_queue.ts";

Deno.test("BoundedQueue.push() drops the oldest items past the count bound", () => {
  const dropped: number[] = [];
  const queue = new BoundedQueue<number>(3, 1_000, (item) => dropped.push(item));
  for (let i = 1; i <= 5; i++) queue.push(i, 1);
  assert.deepEqual(dropped, [1, 2]);
  assert.deepEqual(queue.drain(), [3, 4, 5]);
  assert.equal(queue.size, 0);
});

Deno.test("BoundedQueue.push() drops the oldest items past the size bound, even the new one", () => {
  const dropped: string[] = [];
  const queue = new BoundedQueue<string>(100, 10, (item) => dropped.push(item));
  queue.push("a", 4);
  queue.push("b", 4);
  queue.push("c", 4);
  assert.deepEqual(dropped, ["a"]);
  assert.equal(queue.size, 8);
  queue.push("huge", 11);
  assert.deepEqual(dropped, ["a", "b", "c", "huge"]);
  assert.equal(queue.length, 0);
});

Deno.test("BoundedQueue.shift() keeps order across its compaction", () => {
  const queue = new BoundedQueue<number>(10_000, Infinity);
  for (let i = 0; i < 5_000; i++) queue.push(i, 1);
  for (let i = 0; i < 3_000; i++) assert.equal(queue.shift(), i);
  queue.push(5_000, 1);
  assert.equal(queue.length, 2_001);
  assert.equal(queue.drain()[0], 3_000);
});
