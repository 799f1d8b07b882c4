import assert from "node:assert/strict";
import type { RpcRequest } from "../protocol/jsonrpc.ts";
import {
  type AskedInput,
  collectInputRequests,
  INPUT_KEY_META,
  type InputRequest,
  inputRequiredResult,
  isAskedElicitationComplete,
} from "./input_requests.ts";

const FORM = {
  message: "Your name?",
  requestedSchema: { type: "object", properties: { name: { type: "string" } } },
};
const SAMPLING = {
  messages: [{ role: "user", content: { type: "text", text: "Hi" } }],
  maxTokens: 10,
};
const URL_PARAMS = { mode: "url", message: "Connect", url: "https://idp.example/connect" };

const request = (id: number, method: string, params?: Record<string, unknown>): RpcRequest =>
  params ? { jsonrpc: "2.0", id, method, params } : { jsonrpc: "2.0", id, method };

/** Each row: a 2025 backend's request beside the 2026 input request, its key and what is kept. */
const ROWS: {
  name: string;
  r2025: RpcRequest;
  key: string;
  r2026: InputRequest;
  elicitationId?: string;
}[] = [
  {
    name: "a form elicitation",
    r2025: request(11, "elicitation/create", FORM),
    key: "elicitation-1",
    r2026: { method: "elicitation/create", params: FORM },
  },
  {
    name: "a URL elicitation, without its elicitationId (remembered)",
    r2025: request(12, "elicitation/create", { ...URL_PARAMS, elicitationId: "e-42" }),
    key: "elicitation-1",
    r2026: { method: "elicitation/create", params: URL_PARAMS },
    elicitationId: "e-42",
  },
  {
    name: "a sampling request, without task and progressToken",
    r2025: request(13, "sampling/createMessage", {
      ...SAMPLING,
      task: { ttl: 1000 },
      _meta: { progressToken: 5, trace: "t" },
    }),
    key: "sampling-1",
    r2026: { method: "sampling/createMessage", params: { ...SAMPLING, _meta: { trace: "t" } } },
  },
  {
    name: "a roots request without params",
    r2025: request(14, "roots/list"),
    key: "roots-1",
    r2026: { method: "roots/list" },
  },
  {
    name: "a request whose backend chose its key",
    r2025: request(15, "elicitation/create", { ...FORM, _meta: { [INPUT_KEY_META]: "user_name" } }),
    key: "user_name",
    r2026: { method: "elicitation/create", params: FORM },
  },
];

for (const row of ROWS) {
  Deno.test(`collectInputRequests() turns ${row.name} into an input request`, () => {
    const asked: AskedInput = { key: row.key, backendId: row.r2025.id, request: row.r2026 };
    if (row.elicitationId) asked.elicitationId = row.elicitationId;
    assert.deepEqual(collectInputRequests([row.r2025]), {
      inputRequests: { [row.key]: row.r2026 },
      asked: [asked],
      others: [],
    });
  });
}

Deno.test("collectInputRequests() counts keys per kind in arrival order, not by backend id", () => {
  const collected = collectInputRequests([
    request(90, "sampling/createMessage", SAMPLING),
    request(3, "elicitation/create", FORM),
    request(7, "sampling/createMessage", SAMPLING),
    request(1, "roots/list", {}),
  ]);
  assert.deepEqual(collected.asked.map((entry) => [entry.key, entry.backendId]), [
    ["sampling-1", 90],
    ["elicitation-1", 3],
    ["sampling-2", 7],
    ["roots-1", 1],
  ]);
});

Deno.test("collectInputRequests() never lets a counted key take a chosen one or two share one", () => {
  const chosen = (key: string) => ({ ...SAMPLING, _meta: { [INPUT_KEY_META]: key } });
  const collected = collectInputRequests([
    request(1, "sampling/createMessage", SAMPLING),
    request(2, "sampling/createMessage", chosen("sampling-1")),
    request(3, "sampling/createMessage", chosen("sampling-1")),
    request(4, "sampling/createMessage", chosen("no spaces allowed")),
  ]);
  assert.deepEqual(collected.asked.map((entry) => [entry.key, entry.backendId]), [
    ["sampling-2", 1],
    ["sampling-1", 2],
    ["sampling-3", 3],
    ["sampling-4", 4],
  ]);
});

Deno.test("collectInputRequests() leaves ping and unknown requests to the gateway", () => {
  const ping = request(5, "ping");
  const other = request(6, "tasks/get", { taskId: "t" });
  const collected = collectInputRequests([ping, request(7, "roots/list"), other]);
  assert.deepEqual(collected.others, [ping, other]);
  assert.deepEqual(Object.keys(collected.inputRequests), ["roots-1"]);
});

Deno.test("inputRequiredResult() carries requestState only when there is one", () => {
  const inputRequests = { "roots-1": { method: "roots/list" as const } };
  assert.deepEqual(inputRequiredResult(inputRequests, "v1.a.b"), {
    resultType: "input_required",
    inputRequests,
    requestState: "v1.a.b",
  });
  assert.deepEqual(inputRequiredResult(inputRequests), {
    resultType: "input_required",
    inputRequests,
  });
});

Deno.test("isAskedElicitationComplete() spots the completion of an asked URL elicitation", () => {
  const { asked } = collectInputRequests([
    request(12, "elicitation/create", { ...URL_PARAMS, elicitationId: "e-42" }),
  ]);
  const complete = (id: string) => ({
    method: "notifications/elicitation/complete",
    params: { elicitationId: id },
  });
  assert.equal(isAskedElicitationComplete(complete("e-42"), asked), true);
  assert.equal(isAskedElicitationComplete(complete("e-43"), asked), false);
  assert.equal(isAskedElicitationComplete({ method: "notifications/progress" }, asked), false);
});
