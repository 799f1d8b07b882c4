import assert from "node:assert/strict";
import { headerOf, Http1Response } from "./http1_response.ts";
import { parseHead } from "./http1_wire.ts";

const BODY = new TextEncoder().encode("{}");
const LIST: [string, string][] = [
  ["content-type", "application/json"],
  ["vary", "accept"],
  ["mcp-session-id", "s-1"],
  ["vary", "origin"],
];

Deno.test("Http1Response: headerOf() reads each header as Headers.get would, repeats joined", () => {
  const response = new Http1Response(BODY, 200, "OK", LIST);
  const reference = new Headers(LIST);
  for (const name of ["content-type", "vary", "mcp-session-id", "location"]) {
    assert.equal(headerOf(response, name), reference.get(name), name);
  }
});

Deno.test("Http1Response: `headers` holds every header, once, for whoever reads it", async () => {
  const response = new Http1Response(BODY, 201, "Created", LIST);
  assert.deepEqual([...response.headers], [...new Headers(LIST)]);
  assert.deepEqual([...response.headers], [...new Headers(LIST)], "read twice, filled once");
  assert.equal(response.status, 201);
  assert.equal(response.statusText, "Created");
  assert.equal(await response.text(), "{}");
});

Deno.test("Http1Response: a clone and a Response made from it carry the headers", async () => {
  const clone = new Http1Response(BODY, 200, "OK", LIST).clone();
  assert.equal(clone.headers.get("mcp-session-id"), "s-1");
  assert.equal(await clone.text(), "{}");
  const original = new Http1Response(BODY, 200, "OK", LIST);
  const remade = new Response(original.body, original);
  assert.equal(remade.headers.get("vary"), "accept, origin");
});

Deno.test("Http1Response: once `headers` is changed, headerOf() answers from it", () => {
  const response = new Http1Response(null, 204, "No Content", LIST);
  response.headers.set("mcp-session-id", "s-2");
  assert.equal(headerOf(response, "mcp-session-id"), "s-2");
});

Deno.test("headerOf() reads any other Response's headers", () => {
  assert.equal(headerOf(new Response(null, { headers: LIST }), "vary"), "accept, origin");
});

Deno.test("parseHead() refuses a header Headers would refuse, so a lazy Headers never throws", () => {
  for (const line of ["bad name: x", "name\u0000: x", "x-ok: a\u0000b"]) {
    assert.throws(
      () => parseHead(`HTTP/1.1 200 OK\r\n${line}\r\ncontent-length: 0`),
      /malformed header/,
      JSON.stringify(line),
    );
  }
});
