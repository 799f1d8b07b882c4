import assert from "node:assert/strict";
import { sleep } from "../../../tests/fixtures/waits.ts";
import { type Frame, HEAD_BYTES, OVERSIZED, SseFramer, TAIL_BYTES } from "./sse_frames.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Feeds `text` in chunks of `size` bytes; returns what came out, oversized events as "<X>". */
function frame(text: string, size: number, max = 1024): { frames: string[]; joined: string } {
  const bytes = encoder.encode(text);
  const framer = new SseFramer(max);
  const frames: string[] = [];
  const take = (out: Frame[]) => {
    for (const f of out) frames.push(f === OVERSIZED ? "<X>" : decoder.decode(f));
  };
  for (let at = 0; at < bytes.length; at += size) take(framer.push(bytes.subarray(at, at + size)));
  const rest = framer.end();
  if (rest) frames.push(decoder.decode(rest));
  return { frames, joined: frames.join("") };
}

const STREAM = ': hi\r\n\r\nevent: message\r\ndata: {"a":1}\r\n\r\n' +
  "data: lf\n\n" + "data: cr\r\rid: 3\ndata: mixed\r\n\n" + "data: unfinished";

Deno.test("SseFramer.push() passes every byte on in order, in whole events, however the chunks fall", () => {
  for (let size = 1; size <= STREAM.length; size++) {
    const { frames, joined } = frame(STREAM, size);
    assert.equal(joined, STREAM, `chunks of ${size}`);
    // Every frame but the unfinished tail ends where an event ends (an LF may lead the next).
    for (const f of frames.slice(0, -1)) {
      assert.match(
        f,
        /(\r\n\r\n|\n\n|\r\r|\r\n\n)$|\r$/,
        `chunks of ${size}: ${JSON.stringify(f)}`,
      );
    }
  }
  assert.deepEqual(frame("data: a\n\ndata: b\n\n", 100).frames, ["data: a\n\ndata: b\n\n"]);
});

Deno.test("SseFramer.push() drops an event past the limit, marks where, and goes on", () => {
  const big = `data: ${"x".repeat(100)}\n\n`;
  for (const size of [1, 7, 50, 1000]) {
    const { frames } = frame(`data: a\n\n${big}data: b\n\n`, size, 50);
    assert.equal(frames.join(""), "data: a\n\n<X>data: b\n\n", `chunks of ${size}`);
  }
});

Deno.test("SseFramer.push() cuts one 8 MiB event arriving in 64-byte chunks in linear time", async () => {
  // Searching the whole event again for each chunk (the quadratic way) would scan about 512 GiB
  // here: the test would not end within the watchdog's limit. It yields now and then so that
  // the watchdog can fail it by name rather than the run hanging.
  const size = 8 * 1024 * 1024;
  const chunk = encoder.encode("x".repeat(64));
  const framer = new SseFramer(size + 64);
  assert.deepEqual(framer.push(encoder.encode("data: ")), []);
  for (let sent = 0; sent < size; sent += chunk.length) {
    assert.deepEqual(framer.push(chunk), []);
    if (sent % (64 * 1024) === 0) await sleep(0);
  }
  const out = framer.push(encoder.encode("\n\n"));
  assert.equal(out.length, 1);
  assert.equal((out[0] as Uint8Array).length, size + 8);
});

Deno.test("SseFramer.push() shows its watcher the start and end of each dropped event, however the chunks fall", () => {
  // The limit above HEAD_BYTES, as in the gateway (maxMessageBytes and 16 KiB of framing).
  const big = `data: {"id":1,"t":"${"a".repeat(2 * HEAD_BYTES)}${"z".repeat(TAIL_BYTES)}"}\n\n`;
  const text = `data: x\n\n${big}data: y\n\n${big}`;
  for (const size of [1, 7, 300, 5000, text.length]) {
    const seen: string[] = [];
    const framer = new SseFramer(HEAD_BYTES + 100, {
      started: (head) => seen.push(`start ${decoder.decode(head)}`),
      ended: (tail) => seen.push(`end ${decoder.decode(tail)}`),
    });
    const bytes = encoder.encode(text);
    for (let at = 0; at < bytes.length; at += size) framer.push(bytes.subarray(at, at + size));
    const ends = [`start ${big.slice(0, HEAD_BYTES)}`, `end ${big.slice(-TAIL_BYTES)}`];
    assert.deepEqual(seen, [...ends, ...ends], `chunks of ${size}`);
  }
});
