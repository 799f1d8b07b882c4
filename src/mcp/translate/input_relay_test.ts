import assert from "node:assert/strict";
import type { RequestId, RpcResponse } from "../protocol/jsonrpc.ts";
import type { Json } from "./json_shape.ts";
import { clientRequestsFor2025, elicitationCompletions, retryParams } from "./input_relay.ts";
import { INPUT_KEY_META } from "./input_requests.ts";

const FORM = { message: "Name?", requestedSchema: { type: "object", properties: {} } };
const URL_PARAMS = { mode: "url", message: "Connect", url: "https://idp.example/c" };
const SAMPLING = { messages: [], maxTokens: 5 };

const counter = () => {
  let n = 0;
  return (): RequestId => `gw-${++n}`;
};

/** Each row: a 2026 input request under its key beside the request the 2025 client gets. */
const ROWS: { name: string; key: string; input: Json; r2025: Json; elicitationId?: string }[] = [
  {
    name: "a form elicitation",
    key: "user_name",
    input: { method: "elicitation/create", params: FORM },
    r2025: {
      jsonrpc: "2.0",
      id: "gw-1",
      method: "elicitation/create",
      params: { ...FORM, _meta: { [INPUT_KEY_META]: "user_name" } },
    },
  },
  {
    name: "a URL elicitation, with a minted elicitationId",
    key: "connect",
    input: { method: "elicitation/create", params: URL_PARAMS },
    r2025: {
      jsonrpc: "2.0",
      id: "gw-1",
      method: "elicitation/create",
      params: { ...URL_PARAMS, elicitationId: "minted-1", _meta: { [INPUT_KEY_META]: "connect" } },
    },
    elicitationId: "minted-1",
  },
  {
    name: "a sampling request",
    key: "s",
    input: { method: "sampling/createMessage", params: SAMPLING },
    r2025: {
      jsonrpc: "2.0",
      id: "gw-1",
      method: "sampling/createMessage",
      params: { ...SAMPLING, _meta: { [INPUT_KEY_META]: "s" } },
    },
  },
  {
    name: "a roots request without params",
    key: "r",
    input: { method: "roots/list" },
    r2025: {
      jsonrpc: "2.0",
      id: "gw-1",
      method: "roots/list",
      params: { _meta: { [INPUT_KEY_META]: "r" } },
    },
  },
];

for (const row of ROWS) {
  Deno.test(`clientRequestsFor2025() turns ${row.name} into a request to the client`, () => {
    const result = { resultType: "input_required", inputRequests: { [row.key]: row.input } };
    const sent = {
      key: row.key,
      request: row.r2025,
      ...row.elicitationId ? { elicitationId: row.elicitationId } : {},
    };
    assert.deepEqual(clientRequestsFor2025(result, counter(), () => "minted-1"), {
      sent: [sent],
      unrelayable: [],
    });
  });
}

Deno.test("clientRequestsFor2025() names the input requests it cannot relay", () => {
  const result = {
    resultType: "input_required",
    inputRequests: { a: { method: "roots/list" }, b: { method: "com.example/ask" }, c: 5 },
  };
  const { sent, unrelayable } = clientRequestsFor2025(result, counter());
  assert.deepEqual(sent.map((entry) => entry.key), ["a"]);
  assert.deepEqual(unrelayable, ["b", "c"]);
});

const RESULT = {
  resultType: "input_required",
  inputRequests: {
    user_name: { method: "elicitation/create", params: FORM },
    connect: { method: "elicitation/create", params: URL_PARAMS },
  },
  requestState: "opaque state+/=",
};
const ORIGINAL = { name: "ask", arguments: { q: 1 }, _meta: { progressToken: 1 } };
const { sent } = clientRequestsFor2025(RESULT, counter(), () => "minted-1");
const answer = (id: RequestId, result: Json): RpcResponse => ({ jsonrpc: "2.0", id, result });

Deno.test("retryParams() puts the client's answers under their keys and echoes requestState", () => {
  const answers = [
    answer("gw-2", { action: "accept" }),
    answer("gw-1", { action: "accept", content: { name: "Alice" } }),
  ];
  assert.deepEqual(retryParams({ ...ORIGINAL, requestState: "old" }, RESULT, sent, answers), {
    kind: "retry",
    params: {
      ...ORIGINAL,
      inputResponses: {
        user_name: { action: "accept", content: { name: "Alice" } },
        connect: { action: "accept" },
      },
      requestState: "opaque state+/=",
    },
  });
});

Deno.test("retryParams() retries a state-only result with its state and no earlier answers", () => {
  const stateOnly = { resultType: "input_required", requestState: "s2" };
  const earlierRound = { ...ORIGINAL, inputResponses: { user_name: {} }, requestState: "s1" };
  assert.deepEqual(retryParams(earlierRound, stateOnly, [], []), {
    kind: "retry",
    params: { ...ORIGINAL, requestState: "s2" },
  });
  assert.deepEqual(retryParams(earlierRound, { resultType: "input_required" }, [], []), {
    kind: "retry",
    params: ORIGINAL,
  });
});

Deno.test("retryParams() fails with the client's error, or waits for missing answers", () => {
  const refused: RpcResponse = {
    jsonrpc: "2.0",
    id: "gw-1",
    error: { code: -32601, message: "no elicitation" },
  };
  assert.deepEqual(retryParams(ORIGINAL, RESULT, sent, [refused, answer("gw-2", {})]), {
    kind: "failed",
    error: { code: -32601, message: "no elicitation" },
  });
  assert.deepEqual(retryParams(ORIGINAL, RESULT, sent, [answer("gw-1", { action: "cancel" })]), {
    kind: "waiting",
    keys: ["connect"],
  });
});

Deno.test("elicitationCompletions() completes each accepted URL elicitation", () => {
  assert.deepEqual(
    elicitationCompletions(sent, [
      answer("gw-1", { action: "accept", content: {} }),
      answer("gw-2", { action: "accept" }),
    ]),
    [{
      jsonrpc: "2.0",
      method: "notifications/elicitation/complete",
      params: { elicitationId: "minted-1" },
    }],
  );
  assert.deepEqual(elicitationCompletions(sent, [answer("gw-2", { action: "decline" })]), []);
});
