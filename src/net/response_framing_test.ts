import assert from "node:assert/strict";
import { ResponseFraming } from "./response_framing.ts";

const encoder = new TextEncoder();

/** `text` pushed in pieces of `size`; how many answers are still owed after each piece. */
function owedAfter(framing: ResponseFraming, text: string, size: number): number[] {
  const bytes = encoder.encode(text);
  const owed: number[] = [];
  for (let at = 0; at < bytes.length; at += size) {
    framing.push(bytes.subarray(at, at + size));
    owed.push(framing.pending);
  }
  return owed;
}

Deno.test("ResponseFraming finds where answers end: by length, chunked with trailers, none for HEAD, 204 and 304, after a 100", () => {
  for (const size of [1, 7, 4096]) {
    const framing = new ResponseFraming();
    for (const isHead of [false, false, true, false, false, false]) framing.expect(isHead);
    const answers = [
      "HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello",
      "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5;x=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nx-t: 1\r\n\r\n",
      "HTTP/1.1 200 OK\r\ncontent-length: 99\r\n\r\n",
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
      "HTTP/1.1 304 Not Modified\r\ncontent-length: 10\r\n\r\n",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    ];
    answers.forEach((answer, i) => {
      const owed = owedAfter(framing, answer, size);
      assert.equal(owed.at(-1), 5 - i, `answer ${i} in pieces of ${size}`);
      // Owed until its last byte.
      if (owed.length > 1) assert.equal(owed.at(-2), 6 - i, `answer ${i} in pieces of ${size}`);
    });
    assert.equal(framing.opaque, false);
  }
});

Deno.test("ResponseFraming ends a 205 at its head, as Deno.serve writes it (no length), and knows when an answer is part way", () => {
  const framing = new ResponseFraming();
  framing.expect(false);
  framing.expect(false);
  assert.equal(framing.midAnswer, false);
  // Byte for byte what Deno.serve wrote for `new Response(null, { status: 205 })`; the
  // connection stays open for the next request, so it must not be taken for read-until-close.
  assert.deepEqual(owedAfter(framing, "HTTP/1.1 205 Reset Content\r\ndate: x\r\n\r\n", 4096), [1]);
  assert.equal(framing.opaque, false);
  assert.deepEqual(owedAfter(framing, "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nh", 4096), [1]);
  assert.equal(framing.midAnswer, true);
  assert.deepEqual(owedAfter(framing, "i", 1), [0]);
  assert.equal(framing.midAnswer, false);
  framing.push(encoder.encode("HTTP/1.1"));
  assert.equal(framing.midAnswer, true, "a head part way");
});

Deno.test("ResponseFraming takes an answer read until close, or a protocol switch, for the end of framing", () => {
  const untilClose = new ResponseFraming();
  untilClose.expect(false);
  untilClose.push(encoder.encode("HTTP/1.1 200 OK\r\n\r\nstreamed"));
  assert.equal(untilClose.opaque, true);
  const upgraded = new ResponseFraming();
  upgraded.expect(false);
  upgraded.push(encoder.encode("HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\n\r\n"));
  assert.equal(upgraded.opaque, true);
});
