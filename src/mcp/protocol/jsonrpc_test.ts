import assert from "node:assert/strict";
import { classify, idInFlightMessage, idKey, whyNotJsonRpc } from "./jsonrpc.ts";

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

Deno.test("whyNotJsonRpc() says in a few words why classify() refused a value", () => {
  const cases: [unknown, string][] = [
    [[], "it is an array (a batch); write one message per line"],
    ["x", "it is not a JSON object"],
    [null, "it is not a JSON object"],
    [{ id: 1, method: "ping" }, 'its "jsonrpc" must be "2.0"'],
    [{ jsonrpc: "2.0", id: 1, method: 3 }, 'its "method" must be a string'],
    [
      { jsonrpc: "2.0", id: 1, method: "ping", params: 3 },
      'its "params" must be an object or an array',
    ],
    [{ jsonrpc: "2.0", id: {}, method: "ping" }, 'its "id" must be a string or a number'],
    [{ jsonrpc: "2.0", id: {}, result: {} }, 'its "id" must be a string or a number'],
    [
      { jsonrpc: "2.0", id: null, error: { code: 1, message: "x" } },
      'its "id" must be a string or a number',
    ],
    [{ jsonrpc: "2.0", result: {} }, 'it has neither a "method" nor an "id"'],
    [{ jsonrpc: "2.0", id: 1 }, 'a response must have "result" or "error", not both or neither'],
    [
      { jsonrpc: "2.0", id: 1, result: {}, error: { code: 1, message: "x" } },
      'a response must have "result" or "error", not both or neither',
    ],
    [
      { jsonrpc: "2.0", id: 1, error: { message: "no code" } },
      'its "error" must be an object with a numeric "code" and a string "message"',
    ],
  ];
  for (const [value, reason] of cases) {
    assert.equal(classify(value), undefined, JSON.stringify(value));
    assert.equal(whyNotJsonRpc(value), reason, JSON.stringify(value));
  }
});

Deno.test("idInFlightMessage() quotes string ids and not numeric ones", () => {
  assert.equal(
    idInFlightMessage(7),
    "a request with id 7 is already in flight in this session; use a new id",
  );
  assert.equal(
    idInFlightMessage("7"),
    'a request with id "7" is already in flight in this session; use a new id',
  );
});
