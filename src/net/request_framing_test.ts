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
  framing.push(encoder.encode("POST /a HTTP/1.1\r\nHost: x\r\nContent-Le"));
  assert.equal(framing.phase, "head");
  framing.push(encoder.encode("ngth: 4\r\n\r\nab"));
  assert.equal(framing.phase, "body");
  const rest = framing.push(
    encoder.encode("cdGET /b HTTP/1.1\r\nHost: x\r\n\r\nGET /c HTTP/1.1\r\nHost: x\r\n"),
  );
  assert.equal(rest.heads, 1);
  assert.equal(framing.phase, "head");
  assert.equal(
    rest.forward.map((p) => decoder.decode(p)).join(""),
    `cdGET /b HTTP/1.1\r\n${PEER_HEADER}: 192.0.2.7\r\nHost: x\r\n\r\n`,
  );
});

Deno.test("RequestFraming.push() walks chunked bodies with extensions and trailers to their end", () => {
  const body =
    "4;name=value\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nX-Trailer: 1\r\n\r\n";
  const request = `POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${body}`;
  for (const size of [1, 3, 16, 500]) {
    const seen = feed(request + "GET /next HTTP/1.1\r\nHost: x\r\n\r\n", size);
    assert.equal(seen.error, undefined, `pieces of ${size}`);
    assert.equal(seen.heads, 2, `pieces of ${size}`);
    assert.equal(seen.phase, "idle");
    assert.ok(seen.forwarded.includes(body + "GET /next HTTP/1.1\r\n"), `pieces of ${size}`);
  }
});

Deno.test("RequestFraming.push() drops a few empty lines before a request line, and refuses more", () => {
  for (const size of [1, 3, 1000]) {
    for (const blank of ["\r\n", "\r\n\r\n", "\r\n".repeat(4)]) {
      const seen = feed(`${blank}${POST}`, size);
      assert.equal(seen.heads, 1, `pieces of ${size}`);
      assert.equal(seen.phase, "idle");
      assert.equal(seen.forwarded, POST_SEEN);
    }
    const many = feed(`${"\r\n".repeat(5)}${POST}`, size);
    assert.match(many.error?.reason ?? "", /more than 4 empty lines/, `pieces of ${size}`);
    assert.equal(many.forwarded, "");
  }
  // Empty lines alone are refused as soon as there are too many, not once a head is too large.
  const flood = new RequestFraming("192.0.2.7").push(encoder.encode("\r\n".repeat(32 * 1024)));
  assert.equal(flood.error?.status, 400);
  assert.match(flood.error!.reason, /empty lines/);
});

Deno.test("RequestFraming.push() refuses a head whose lines do not all end with CRLF, however it is split", () => {
  const heads: [string, RegExp][] = [
    // hyper ends a line at a bare LF: the second line would reach it as a header of its own.
    [`GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\n${PEER_HEADER}: 1.2.3.4\r\n\r\n`, /LF alone/],
    ["POST / HTTP/1.1\r\nHost: x\r\nX-A: 1\nContent-Length: 5\r\n\r\nhello", /LF alone/],
    ["GET / HTTP/1.1\nHost: x\r\n\r\n", /LF alone/],
    ["GET / HTTP/1.1\r\nHost: x\r\n\n", /LF alone/],
    ["\nGET / HTTP/1.1\r\nHost: x\r\n\r\n", /LF alone/],
    ["GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\rX-B: 2\r\n\r\n", /CR not followed by LF/],
    ["GET / HTTP/1.1\r\nHost: x\r\nContent\rLength: 5\r\n\r\n", /CR not followed by LF/],
    ["GET / HTTP/1.1\r\nHost: x\r\n\r\r\n", /CR not followed by LF/],
  ];
  for (const [head, reason] of heads) {
    for (const size of [1, 2, 5, 1000]) {
      const seen = feed(head, size);
      assert.match(
        seen.error?.reason ?? "",
        reason,
        `${JSON.stringify(head)} in pieces of ${size}`,
      );
      assert.equal(seen.error?.status, 400);
      assert.equal(seen.forwarded, "", "nothing of the head passes");
    }
  }
});

Deno.test("RequestFraming.push() refuses chunked bodies whose lines do not end with CRLF", () => {
  const head = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  // A trailer line ended by LF alone once ended the body for the front and not for the server,
  // and what the front took for the next request was read by the server as trailers.
  for (
    const body of [
      "5\nhello\r\n0\r\n\r\n",
      "5\r\nhello\n0\r\n\r\n",
      "0\r\nX: y\n\n",
      "0\r\n\n",
      "0\r\nX\ry\r\n\r\n",
      "5;a\nb\r\n",
    ]
  ) {
    for (const size of [1, 4, 1000]) {
      const seen = feed(`${head}${body}GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n`, size);
      assert.ok(seen.error, `${JSON.stringify(body)} in pieces of ${size}`);
      assert.ok(!seen.forwarded.includes("smuggled"), "the request after it never passes");
    }
  }
});

Deno.test("RequestFraming.push() refuses framings that could smuggle a request, and its own header", () => {
  const refused: [string, number, RegExp][] = [
    [
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
      400,
      /both/,
    ],
    [
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
      400,
      /conflicting/,
    ],
    ["POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400, /not a number/],
    ["POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 400, /must end with chunked/],
    [
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
      400,
      /must end with chunked/,
    ],
    ["GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n folded\r\n\r\n", 400, /folded/],
    ["GET / HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n", 400, /no colon/],
    [`GET / HTTP/1.1\r\nHost: x\r\nX-Gatehouse-Peer: 10.0.0.1\r\n\r\n`, 400, /gateway's own/],
    // Deno.serve reads no body after CONNECT: a declared one would reach it as a request.
    ["CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\nContent-Length: 3\r\n\r\n", 400, /CONNECT/],
    ["\r\nCONNECT x:443 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", 400, /CONNECT/],
    ["CONNECT x:443 HTTP/1.1\r\nHost: x\r\n\r\n", 400, /not a forward proxy/],
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
    // 2^53 + 1: a JavaScript number cannot hold it, so the front would count the chunk short.
    ["20000000000001\r\n", /too large/],
  ];
  for (const [body, reason] of badBodies) {
    const seen = feed(`POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${body}`, 5);
    assert.match(seen.error?.reason ?? "", reason, body);
  }
});

Deno.test("RequestFraming.push() answers 431 once a head passes its size limit, ended or not", () => {
  const framing = new RequestFraming("192.0.2.7", 1024);
  const big = `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(2000)}`;
  const open = framing.push(encoder.encode(big));
  assert.equal(open.error?.status, 431);
  const whole = feed(`${big}\r\n\r\n`, 4096, new RequestFraming("192.0.2.7", 1024));
  assert.equal(whole.error?.status, 431);
});

Deno.test("RequestFraming.push() reads framing header names in any case and their values between spaces and tabs", () => {
  const mixed = feed("POST / HTTP/1.1\r\nHost: x\r\ncOnTeNt-LeNgTh: \t 3 \r\n\r\nabc", 4);
  assert.equal(mixed.phase, "idle", "the 3-byte body was read as the body");
  assert.equal(mixed.heads, 1);
  const conflicting = feed(
    "POST / HTTP/1.1\r\nHost: x\r\nCONTENT-LENGTH: 3\r\ncontent-length: 4\r\n\r\n",
    7,
  );
  assert.match(conflicting.error?.reason ?? "", /conflicting/);
  const long = feed(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${"1".repeat(16)}\r\n\r\n`, 9);
  assert.match(long.error?.reason ?? "", /not a number/);
});

Deno.test("RequestFraming.push() passes on nothing of a refused request, only the whole ones before it", () => {
  const text = (parts: Uint8Array[]) => parts.map((part) => decoder.decode(part)).join("");
  // The refused request's head came in the same bytes, before its body broke the framing.
  const framing = new RequestFraming("192.0.2.7");
  assert.equal(framing.push(encoder.encode("GET /one HTTP/1.1\r\nHost: x\r\n\r\n")).heads, 1);
  const broken = framing.push(
    encoder.encode(
      "POST /two HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\nX",
    ),
  );
  assert.match(broken.error?.reason ?? "", /CRLF/);
  assert.equal(text(broken.forward), "", "the head of /two is not passed on");
  assert.equal(broken.heads, 0);
  // A body begun in earlier bytes ends in these, then a refused head: the body's end goes on.
  const body = new RequestFraming("192.0.2.7");
  body.push(encoder.encode("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nab"));
  const refused = body.push(
    encoder.encode(
      "cdPOST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET /c HTTP/1.1\nX: 1\r\n\r\n",
    ),
  );
  assert.match(refused.error?.reason ?? "", /LF alone/);
  assert.equal(
    text(refused.forward),
    `cdPOST /b HTTP/1.1\r\nconnection: close\r\n${PEER_HEADER}: 192.0.2.7\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc`,
  );
  assert.equal(refused.afterAnswers, true);
});

Deno.test("RequestFraming.push() refuses an HTTP/1.1 request without Host, with two, or with one that is no host (RFC 9112 §3.2)", () => {
  for (
    const [text, reason] of [
      ["GET / HTTP/1.1\r\n\r\n", /must carry a Host/],
      ["GET / HTTP/1.1\r\nX-A: 1\r\n\r\n", /must carry a Host/],
      ["GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", /more than one Host/],
      ["GET / HTTP/1.1\r\nHost: a b\r\n\r\n", /not a host name/],
      ["GET / HTTP/1.1\r\nHost: evil.example/x\r\n\r\n", /not a host name/],
      ["GET / HTTP/1.1\r\nHost: user@evil.example\r\n\r\n", /not a host name/],
    ] as const
  ) {
    const seen = feed(text, 1000);
    assert.equal(seen.error?.status, 400, text);
    assert.match(seen.error!.reason, reason, text);
    assert.equal(seen.heads, 0, text);
  }
  // HTTP/1.0 may leave it out; names, literals, ports and an empty value pass.
  for (
    const text of [
      "GET / HTTP/1.0\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: gw.example.com:8443\r\n\r\n",
      "GET / HTTP/1.1\r\nHOST:\t[2001:db8::1]:443 \r\n\r\n",
      "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
      "GET / HTTP/1.1\r\nHost:\r\n\r\n",
    ]
  ) {
    const seen = feed(text, 1000);
    assert.equal(seen.error, undefined, text);
    assert.equal(seen.heads, 1, text);
  }
});
