import assert from "node:assert/strict";
import { answerProblem, answersForBackend } from "./input_answers.ts";
import { collectInputRequests, type InputRequest } from "./input_requests.ts";

const { asked } = collectInputRequests([
  {
    jsonrpc: "2.0",
    id: 21,
    method: "elicitation/create",
    params: {
      message: "Name?",
      requestedSchema: { type: "object", properties: {} },
      _meta: { "gatehouse/inputKey": "user_name" },
    },
  },
  { jsonrpc: "2.0", id: 22, method: "sampling/createMessage", params: { messages: [] } },
  { jsonrpc: "2.0", id: "r", method: "roots/list" },
]);

const ELICITED = { action: "accept", content: { name: "Alice", tags: ["a"], n: 1, ok: true } };
const SAMPLED = { role: "assistant", content: { type: "text", text: "Hi" }, model: "m1" };
const ROOTS = { roots: [{ uri: "file:///test/root" }] };

/** Each row: a 2026 client's answer under its key beside the 2025 response the backend gets. */
const ROWS = [
  { key: "user_name", answer: ELICITED, response: { jsonrpc: "2.0", id: 21, result: ELICITED } },
  { key: "sampling-1", answer: SAMPLED, response: { jsonrpc: "2.0", id: 22, result: SAMPLED } },
  { key: "roots-1", answer: ROOTS, response: { jsonrpc: "2.0", id: "r", result: ROOTS } },
];

Deno.test("answersForBackend() answers every backend request under its own id", () => {
  const inputResponses = Object.fromEntries(ROWS.map((row) => [row.key, row.answer]));
  assert.deepEqual(answersForBackend(asked, { ...inputResponses, unknown_extra_key: 1 }), {
    kind: "answered",
    responses: ROWS.map((row) => row.response),
  });
});

Deno.test("answersForBackend() sends what was answered and asks again for the rest", () => {
  assert.deepEqual(answersForBackend(asked, { "roots-1": ROOTS, wrong_key: ELICITED }), {
    kind: "incomplete",
    responses: [ROWS[2].response],
    missing: asked.slice(0, 2),
    inputRequests: { user_name: asked[0].request, "sampling-1": asked[1].request },
  });
  const none = answersForBackend(asked, undefined);
  assert.equal(none.kind, "incomplete");
  assert.deepEqual(none.kind === "incomplete" && none.responses, []);
});

const MALFORMED: { name: string; inputResponses: unknown; error: unknown }[] = [
  {
    name: "inputResponses that are not an object",
    inputResponses: null,
    error: {
      code: -32602,
      message: "params.inputResponses must be an object of answers by key; fix it and retry",
    },
  },
  {
    name: "an answer that is not an object",
    inputResponses: { user_name: 12345, "roots-1": ROOTS },
    error: {
      code: -32602,
      message: 'params.inputResponses["user_name"] must be an object; fix it and retry',
      data: { key: "user_name" },
    },
  },
  {
    name: "a sampling answer without a model",
    inputResponses: { "sampling-1": { role: "assistant", content: [] } },
    error: {
      code: -32602,
      message: 'params.inputResponses["sampling-1"] must have a string "model"; fix it and retry',
      data: { key: "sampling-1" },
    },
  },
];

for (const row of MALFORMED) {
  Deno.test(`answersForBackend() refuses ${row.name} and sends nothing`, () => {
    assert.deepEqual(answersForBackend(asked, row.inputResponses), {
      kind: "malformed",
      error: row.error,
    });
  });
}

const FORM: InputRequest = { method: "elicitation/create", params: { message: "m" } };
const SAMPLE: InputRequest = { method: "sampling/createMessage", params: { messages: [] } };
const LIST: InputRequest = { method: "roots/list" };

const PROBLEMS: [InputRequest, unknown, string | undefined][] = [
  [FORM, { action: "decline" }, undefined],
  [FORM, { action: "ok" }, 'must have "action" "accept", "decline" or "cancel"'],
  [
    FORM,
    { action: "accept", content: { nested: { a: 1 } } },
    'has a "content" that is not an object of strings, numbers, booleans or string lists',
  ],
  [SAMPLE, { ...SAMPLED, role: "system" }, 'must have "role" "assistant" or "user"'],
  [SAMPLE, { ...SAMPLED, content: "text" }, 'must have a "content" block or list of blocks'],
  [LIST, { roots: "file:///" }, 'must have a "roots" list'],
  [LIST, { roots: [{ name: "no uri" }] }, 'has a root without a string "uri"'],
];

for (const [request, answer, problem] of PROBLEMS) {
  Deno.test(`answerProblem() says ${problem ?? "nothing"} for ${request.method}`, () => {
    assert.equal(answerProblem(request, answer), problem);
  });
}
