import assert from "node:assert/strict";
import { classify, idKey } from "./jsonrpc.ts";

Deno.test("classify() sorts requests, notifications and responses", () => {
  assert.equal(classify({ jsonrpc: "2.0", id: 1, method: "ping" })?.kind, "request");
  assert.equal(
    classify({ jsonrpc: "2.0", method: "notifications/initialized" })?.kind,
    "notification",
  );
  assert.equal(classify({ jsonrpc: "2.0", id: "a", result: {} })?.kind, "response");
  assert.equal(
    classify({ jsonrpc: "2.0", id: 2, error: { code: -1, message: "x" } })?.kind,
    "response",
  );
});

Deno.test("classify() rejects what is not JSON-RPC 2.0", () => {
  for (
    const bad of [
      null,
      [],
      "x",
      { id: 1, method: "ping" },
      { jsonrpc: "1.0", id: 1, method: "ping" },
      { jsonrpc: "2.0", id: null, method: "ping" },
      { jsonrpc: "2.0", id: {}, method: "ping" },
      { jsonrpc: "2.0", id: 1, method: "ping", params: 3 },
      { jsonrpc: "2.0", id: 1 },
      { jsonrpc: "2.0", id: 1, result: {}, error: { code: 1, message: "x" } },
      { jsonrpc: "2.0", id: 1, error: { message: "no code" } },
    ]
  ) assert.equal(classify(bad), undefined, JSON.stringify(bad));
});

Deno.test("idKey() keeps numeric and string ids apart", () => {
  assert.notEqual(idKey(1), idKey("1"));
});
