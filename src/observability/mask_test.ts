import assert from "node:assert/strict";
import { SecretMask } from "./mask.ts";

Deno.test("SecretMask.mask() replaces every occurrence of every secret with ***", () => {
  const mask = new SecretMask(["tok_0123456789", "env-secret-value"]);
  assert.equal(
    mask.mask("token=tok_0123456789 key=env-secret-value again tok_0123456789"),
    "token=*** key=*** again ***",
  );
});

Deno.test("SecretMask.mask() hides a secret containing another secret whole", () => {
  const mask = new SecretMask(["abcdefgh", "xxabcdefghyy"]);
  assert.equal(mask.mask("[xxabcdefghyy] [abcdefgh]"), "[***] [***]");
});

Deno.test("SecretMask.mask() leaves values shorter than 8 characters alone", () => {
  const mask = new SecretMask(["info", "1234567", undefined]);
  assert.equal(mask.size, 0);
  assert.equal(mask.mask("level info, pid 1234567"), "level info, pid 1234567");
});

Deno.test("SecretMask.mask() hides the URL-encoded form of a secret too", () => {
  const mask = new SecretMask(["a+b/c=d&e 0123"]);
  assert.equal(mask.mask("GET /mcp?key=a%2Bb%2Fc%3Dd%26e%200123"), "GET /mcp?key=***");
});

Deno.test("SecretMask.mask() masks a secret's beginning at the end of a cut line", () => {
  const mask = new SecretMask(["ghp_0123456789abcdef"]);
  assert.equal(mask.mask("...printing ghp_01234", { cut: true }), "...printing ***");
  assert.equal(mask.mask("...printing ghp_01234"), "...printing ghp_01234", "not cut: kept");
  assert.equal(mask.mask("ends in ghp", { cut: true }), "ends in ghp", "too short to tell");
});

Deno.test("SecretMask.maskError() rewrites the message and stack in place", () => {
  const mask = new SecretMask(["tok_0123456789"]);
  const error = new TypeError("backend wrote invalid JSON-RPC: tok_0123456789");
  assert.equal(mask.maskError(error), error);
  assert.equal(error.message, "backend wrote invalid JSON-RPC: ***");
  assert.ok(!error.stack?.includes("tok_0123456789"));
  assert.ok(error instanceof TypeError);
});

Deno.test("SecretMask.add() takes values learnt later (a refreshed token)", () => {
  const mask = new SecretMask();
  mask.add("refreshed-token-1");
  mask.add("refreshed-token-1");
  assert.equal(mask.size, 1);
  assert.equal(mask.mask("got refreshed-token-1"), "got ***");
});
