import assert from "node:assert/strict";
import { bypassed } from "./proxy_env.ts";

Deno.test("bypassed() matches NO_PROXY entries the way proxy clients do", () => {
  const url = new URL("http://mcp.internal.example.com:8080/mcp");
  assert.equal(bypassed(url, []), false);
  assert.equal(bypassed(url, ["*"]), true);
  assert.equal(bypassed(url, ["example.com"]), true, "a domain covers its subdomains");
  assert.equal(bypassed(url, [".internal.example.com"]), true);
  assert.equal(bypassed(url, ["mcp.internal.example.com:8080"]), true);
  assert.equal(bypassed(url, ["mcp.internal.example.com:9090"]), false, "another port");
  assert.equal(bypassed(url, ["ample.com"]), false, "not a suffix of a label");
  assert.equal(bypassed(new URL("http://[::1]:3000/"), ["::1"]), true);
  assert.equal(bypassed(new URL("http://127.0.0.1/"), ["127.0.0.1"]), true);
});
