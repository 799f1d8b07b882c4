import assert from "node:assert/strict";
import { redirectHandler } from "./redirect_http.ts";

Deno.test("redirectHandler() sends any request to baseUrl's origin with path and query, never to the Host sent", async () => {
  const handler = redirectHandler("https://gw.example.com");
  const response = await handler(
    new Request("http://evil.example/linear/mcp?a=1", { headers: { host: "evil.example" } }),
  );
  assert.equal(response.status, 308);
  assert.equal(response.headers.get("location"), "https://gw.example.com/linear/mcp?a=1");
});

Deno.test("redirectHandler() answers an HTTP-01 challenge from the store, 404 for unknown or malformed tokens", async () => {
  const answers = new Map([["tok_en-1", "tok_en-1.thumbprint"]]);
  const handler = redirectHandler("https://gw.example.com", (token) => {
    return Promise.resolve(answers.get(token));
  });
  const known = await handler(
    new Request("http://gw.example.com/.well-known/acme-challenge/tok_en-1"),
  );
  assert.equal(known.status, 200);
  assert.equal(await known.text(), "tok_en-1.thumbprint");
  for (const token of ["other", "a%2F..%2Fb", "x".repeat(200)]) {
    const response = await handler(
      new Request(`http://gw.example.com/.well-known/acme-challenge/${token}`),
    );
    assert.equal(response.status, 404, token);
    await response.body?.cancel();
  }
});
