import assert from "node:assert/strict";
import { encodeRequest, findHeadEnd, parseHead, utf8Length } from "./http1_wire.ts";

const decoder = new TextDecoder();
const encoder = new TextEncoder();

Deno.test("encodeRequest() writes the head, the declared length and the body in one packet", () => {
  const url = new URL("http://backend:8080/mcp?x=1");
  const text = decoder.decode(
    encodeRequest(
      "POST",
      url,
      { headers: { "content-type": "application/json" }, body: "{}" },
      "ua",
    ),
  );
  assert.equal(
    text,
    "POST /mcp?x=1 HTTP/1.1\r\nhost: backend:8080\r\ncontent-type: application/json\r\n" +
      "user-agent: ua\r\naccept: */*\r\ncontent-length: 2\r\n\r\n{}",
  );
});

Deno.test("encodeRequest() declares a body's UTF-8 length, short or long, whatever its characters", () => {
  const url = new URL("http://backend/mcp");
  for (const body of ["{}", "é€😀".repeat(10), "é€😀x".repeat(2000), "x".repeat(70_000)]) {
    const bytes = encodeRequest("POST", url, { body }, "ua");
    const text = decoder.decode(bytes);
    const split = text.indexOf("\r\n\r\n") + 4;
    const declared = Number(/content-length: (\d+)\r\n/.exec(text)?.[1]);
    assert.equal(declared, encoder.encode(body).length, `${body.length} characters`);
    assert.equal(bytes.length - encoder.encode(text.slice(0, split)).length, declared);
    assert.equal(text.slice(split), body);
  }
});

Deno.test("encodeRequest() refuses header names and values that would split the request", () => {
  const url = new URL("http://backend/mcp");
  assert.throws(() => encodeRequest("GET", url, { headers: { a: "1\r\nx-admin: 1" } }, "ua"));
  assert.throws(() => encodeRequest("GET", url, { headers: { "bad name": "1" } }, "ua"));
  assert.throws(() => encodeRequest("GE T", url, undefined, "ua"));
});

Deno.test("encodeRequest() writes a frozen record's headers as the record holds them, every time", () => {
  const url = new URL("http://backend/mcp");
  const frozen = Object.freeze({ "mcp-session-id": "s-1", "user-agent": "gatehouse-test" });
  const first = decoder.decode(encodeRequest("POST", url, { headers: frozen, body: "{}" }, "ua"));
  const again = decoder.decode(encodeRequest("GET", url, { headers: frozen }, "ua"));
  assert.match(
    first,
    /\r\nmcp-session-id: s-1\r\nuser-agent: gatehouse-test\r\naccept: \*\/\*\r\n/,
  );
  assert.match(
    again,
    /^GET \/mcp HTTP\/1\.1\r\nhost: backend\r\nmcp-session-id: s-1\r\nuser-agent: gatehouse-test\r\naccept/,
  );
  // A record that can change is read afresh each time.
  const open: Record<string, string> = { "mcp-session-id": "s-1" };
  encodeRequest("GET", url, { headers: open }, "ua");
  open["mcp-session-id"] = "s-2";
  assert.match(decoder.decode(encodeRequest("GET", url, { headers: open }, "ua")), /id: s-2\r\n/);
  // A frozen record with an unsafe value is refused every time, not only the first.
  const unsafe = Object.freeze({ a: "1\r\nx-admin: 1" });
  assert.throws(() => encodeRequest("GET", url, { headers: unsafe }, "ua"));
  assert.throws(() => encodeRequest("GET", url, { headers: unsafe }, "ua"));
});

Deno.test("utf8Length() counts the bytes TextEncoder would write", () => {
  for (const text of ["plain", "é ü ß", "日本語", "emoji 🎉", "lone \ud800 x", "\udc00"]) {
    assert.equal(utf8Length(text), encoder.encode(text).length, text);
  }
});

Deno.test("findHeadEnd() finds the empty line after the head, with CRLF or bare LF", () => {
  const crlf = encoder.encode("HTTP/1.1 200 OK\r\na: 1\r\n\r\nbody");
  assert.equal(findHeadEnd(crlf, 0, crlf.length), crlf.length - 4);
  const lf = encoder.encode("HTTP/1.1 200 OK\na: 1\n\nbody");
  assert.equal(findHeadEnd(lf, 0, lf.length), lf.length - 4);
  assert.equal(findHeadEnd(crlf, 0, crlf.length - 6), -1, "not all of it has arrived");
});

Deno.test("parseHead() reads framing and keep-alive, and refuses conflicting lengths", () => {
  const head = parseHead(
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n" +
      "Content-Length: 5\r\nContent-Encoding: gzip",
  );
  assert.equal(head.chunked, true);
  assert.equal(head.length, undefined, "chunked wins over a length");
  assert.equal(head.keepAlive, true);
  assert.equal(head.contentType, "text/event-stream");
  assert.equal(head.encoding, "gzip");
  assert.equal(parseHead("HTTP/1.1 200 OK\r\nContent-Length: 0").keepAlive, true);
  assert.equal(parseHead("HTTP/1.1 200 OK").keepAlive, false, "a body to EOF ends the connection");
  assert.equal(parseHead("HTTP/1.0 200 OK\r\nContent-Length: 0").keepAlive, false);
  assert.throws(() => parseHead("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6"));
  assert.throws(() => parseHead("HTTP/2 200"));
});
