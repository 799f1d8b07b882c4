import assert from "node:assert/strict";
import type { JSONRPCMessage } from "../../sdk.ts";
import type { RpcRequest } from "../protocol/jsonrpc.ts";
import { InputRelay } from "./modern_inputs.ts";

const URL_ASK = { mode: "url", message: "Connect", url: "https://idp.example/connect" };
const RESULT = {
  resultType: "input_required",
  inputRequests: {
    connect: { method: "elicitation/create", params: URL_ASK },
    roots: { method: "roots/list" },
  },
  requestState: "sealed",
};

function relay() {
  const sent: RpcRequest[] = [];
  const inputs = new InputRelay((message: JSONRPCMessage) => sent.push(message as RpcRequest));
  return { inputs, sent };
}

Deno.test("InputRelay.ask() asks the client and retries with its answers once all are in", async () => {
  const { inputs, sent } = relay();
  const call = {};
  const round = inputs.ask(call, { name: "t", requestState: "older" }, RESULT);
  assert.deepEqual(sent.map((request) => request.method), ["elicitation/create", "roots/list"]);
  const elicitationId = sent[0].params?.elicitationId;
  assert.equal(typeof elicitationId, "string", "a URL elicitation gets the id 2025 requires");
  assert.equal(inputs.answered({ jsonrpc: "2.0", id: sent[1].id, result: { roots: [] } }), true);
  assert.equal(inputs.waiting, 1);
  inputs.answered({ jsonrpc: "2.0", id: sent[0].id, result: { action: "accept" } });
  assert.deepEqual(await round, {
    outcome: {
      kind: "retry",
      params: {
        name: "t",
        inputResponses: { connect: { action: "accept" }, roots: { roots: [] } },
        requestState: "sealed",
      },
    },
    completions: [{
      jsonrpc: "2.0",
      method: "notifications/elicitation/complete",
      params: { elicitationId },
    }],
  });
  assert.equal(inputs.answered({ jsonrpc: "2.0", id: sent[0].id, result: {} }), false);
});

Deno.test("InputRelay.drop() ends a round whose call was given up; late answers are not its", async () => {
  const { inputs, sent } = relay();
  const call = {};
  const round = inputs.ask(call, {}, RESULT);
  inputs.drop(call);
  assert.equal(await round, undefined);
  assert.equal(inputs.waiting, 0);
  assert.equal(inputs.answered({ jsonrpc: "2.0", id: sent[0].id, result: {} }), false);
});

Deno.test("InputRelay.ask() fails the call at once when an input cannot be asked of a 2025 client", async () => {
  const { inputs, sent } = relay();
  const odd = { resultType: "input_required", inputRequests: { x: { method: "com.example/ask" } } };
  const round = await inputs.ask({}, {}, odd);
  assert.equal(round?.outcome.kind, "failed");
  assert.match(
    round?.outcome.kind === "failed" ? round.outcome.error.message : "",
    /cannot be asked for \(x\)/,
  );
  assert.deepEqual(sent, []);
});
