import assert from "node:assert/strict";
import { PEER_HEADER, RequestFraming } from "./request_framing.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Feeds `text` in pieces of `size` bytes; returns what was forwarded, heads seen, last phase. */
function feed(text: string, size: number, framing = new RequestFraming("192.0.2.7")) {
  const bytes = encoder.encode(text);
  let forwarded = "";
  let heads = 0;
  const phases: string[] = [];
  for (let at = 0; at < bytes.length; at += size) {
    const result = framing.push(bytes.subarray(at, at + size));
    if (result.error) return { error: result.error, forwarded, heads, phases };
    for (const part of result.forward) forwarded += decoder.decode(part);
    heads += result.heads;
    phases.push(framing.phase);
  }
  return { forwarded, heads, phase: framing.phase, phases };
}

const POST = "POST /a/mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nhello world";
const POST_SEEN = `POST /a/mcp HTTP/1.1\r\n${PEER_HEADER}: 192.0.2.7\r\nHost: x\r\n` +
  "Content-Length: 11\r\n\r\nhello world";

Deno.test("RequestFraming.push() forwards a head with the peer line added and its body unchanged, however it is split", () => {
  for (const size of [1, 2, 3, 7, 40, 1000]) {
    const seen = feed(POST, size);
    assert.equal(seen.forwarded, POST_SEEN, `pieces of ${size}`);
    assert.equal(seen.heads, 1);
    assert.equal(seen.phase, "idle");
  }
});

Deno.test("RequestFraming.push() tells head from body from idle, and follows pipelined requests", () => {
  const framing = new RequestFraming("192.0.2.7");
  assert.equal(framing.phase, "idle");
  framing.push(encoder.encode("POST /a HTTP/1.1\r\nContent-Le"));
  assert.equal(framing.phase, "head");
  framing.push(encoder.encode("ngth: 4\r\n\r\nab"));
  assert.equal(framing.phase, "body");
  const rest = framing.push(encoder.encode("cdGET /b HTTP/1.1\r\n\r\nGET /c HTTP/1.1\r\n"));
  assert.equal(rest.heads, 1);
  assert.equal(framing.phase, "head");
  assert.equal(
    rest.forward.map((p) => decoder.decode(p)).join(""),
    `cdGET /b HTTP/1.1\r\n${PEER_HEADER}: 192.0.2.7\r\n\r\n`,
  );
});

Deno.test("RequestFraming.push() walks chunked bodies with extensions and trailers to their end", () => {
  const body =
    "4;name=value\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nX-Trailer: 1\r\n\r\n";
  const request = `POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n${body}`;
  for (const size of [1, 3, 16, 500]) {
    const seen = feed(request + "GET /next HTTP/1.1\r\n\r\n", size);
    assert.equal(seen.error, undefined, `pieces of ${size}`);
    assert.equal(seen.heads, 2, `pieces of ${size}`);
    assert.equal(seen.phase, "idle");
    assert.ok(seen.forwarded.includes(body + "GET /next HTTP/1.1\r\n"), `pieces of ${size}`);
  }
});

Deno.test("RequestFraming.push() ignores empty lines before a request line", () => {
  for (const size of [1, 3, 1000]) {
    for (const blank of ["\r\n", "\r\n\r\n"]) {
      const seen = feed(`${blank}${POST}`, size);
      assert.equal(seen.heads, 1, `pieces of ${size}`);
      assert.equal(seen.phase, "idle");
      assert.equal(seen.forwarded, `${blank}${POST_SEEN}`);
    }
  }
});

Deno.test("RequestFraming.push() refuses framings that could smuggle a request, and its own header", () => {
  const refused: [string, number, RegExp][] = [
    ["POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400, /both/],
    ["POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", 400, /conflicting/],
    ["POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400, /not a number/],
    ["POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 400, /must end with chunked/],
    ["POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400, /must end with chunked/],
    ["GET / HTTP/1.1\r\nX-A: 1\r\n folded\r\n\r\n", 400, /folded/],
    ["GET / HTTP/1.1\r\nno colon here\r\n\r\n", 400, /no colon/],
    [`GET / HTTP/1.1\r\nX-Gatehouse-Peer: 10.0.0.1\r\n\r\n`, 400, /gateway's own/],
  ];
  for (const [request, status, reason] of refused) {
    const seen = feed(request, 5);
    assert.equal(seen.error?.status, status, request);
    assert.match(seen.error!.reason, reason, request);
    assert.equal(seen.forwarded, "", `nothing of a refused head passes: ${request}`);
  }
  const badBodies: [string, RegExp][] = [
    ["zz\r\n", /not hexadecimal/],
    ["2\r\nabXY", /CRLF/],
    [`${"1".repeat(17)}\r\n`, /too large/],
  ];
  for (const [body, reason] of badBodies) {
    const seen = feed(`POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n${body}`, 5);
    assert.match(seen.error?.reason ?? "", reason, body);
  }
});

Deno.test("RequestFraming.push() answers 431 once a head passes its size limit, ended or not", () => {
  const framing = new RequestFraming("192.0.2.7", 1024);
  const big = `GET / HTTP/1.1\r\nX-Big: ${"a".repeat(2000)}`;
  const open = framing.push(encoder.encode(big));
  assert.equal(open.error?.status, 431);
  const whole = feed(`${big}\r\n\r\n`, 4096, new RequestFraming("192.0.2.7", 1024));
  assert.equal(whole.error?.status, 431);
});

Deno.test("RequestFraming.push() reads framing header names in any case and their values between spaces and tabs", () => {
  const mixed = feed("POST / HTTP/1.1\r\ncOnTeNt-LeNgTh: \t 3 \r\n\r\nabc", 4);
  assert.equal(mixed.phase, "idle", "the 3-byte body was read as the body");
  assert.equal(mixed.heads, 1);
  const conflicting = feed("POST / HTTP/1.1\r\nCONTENT-LENGTH: 3\r\ncontent-length: 4\r\n\r\n", 7);
  assert.match(conflicting.error?.reason ?? "", /conflicting/);
  const long = feed(`POST / HTTP/1.1\r\nContent-Length: ${"1".repeat(16)}\r\n\r\n`, 9);
  assert.match(long.error?.reason ?? "", /not a number/);
  // A lone CR where "-" should be makes another name, not Content-Length (0x0d | 0x20 is "-").
  const stray = feed("POST / HTTP/1.1\r\nContent\rLength: 5\r\n\r\n", 64);
  assert.equal(stray.phase, "idle");
  assert.equal(stray.error, undefined);
});
