import assert from "node:assert/strict";
import { collectInputRequests } from "./input_requests.ts";
import {
  capabilityRefusal,
  declares,
  refusalForBackend,
  splitByCapabilities,
} from "./input_capabilities.ts";
import type { Json } from "./json_shape.ts";
import type { InputRequest } from "./input_requests.ts";

const FORM: InputRequest = {
  method: "elicitation/create",
  params: { message: "Name?", requestedSchema: { type: "object", properties: {} } },
};
const URL: InputRequest = {
  method: "elicitation/create",
  params: { mode: "url", message: "Go", url: "https://x.example" },
};
const SAMPLING: InputRequest = {
  method: "sampling/createMessage",
  params: { messages: [], maxTokens: 5 },
};
const SAMPLING_TOOLS: InputRequest = {
  method: "sampling/createMessage",
  params: { messages: [], maxTokens: 5, tools: [] },
};
const ROOTS: InputRequest = { method: "roots/list" };

/** Each row: an input request, the capabilities of the request that would carry it. */
const ROWS: { name: string; request: InputRequest; capabilities: Json; declared: boolean }[] = [
  {
    name: "form elicitation under elicitation: {}",
    request: FORM,
    capabilities: { elicitation: {} },
    declared: true,
  },
  {
    name: "form elicitation under elicitation.form",
    request: FORM,
    capabilities: { elicitation: { form: {} } },
    declared: true,
  },
  {
    name: "form elicitation under elicitation.url only",
    request: FORM,
    capabilities: { elicitation: { url: {} } },
    declared: false,
  },
  {
    name: "URL elicitation under elicitation: {}",
    request: URL,
    capabilities: { elicitation: {} },
    declared: false,
  },
  {
    name: "URL elicitation under elicitation.url",
    request: URL,
    capabilities: { elicitation: { url: {} } },
    declared: true,
  },
  {
    name: "sampling under sampling",
    request: SAMPLING,
    capabilities: { sampling: {} },
    declared: true,
  },
  {
    name: "sampling with tools under sampling: {}",
    request: SAMPLING_TOOLS,
    capabilities: { sampling: {} },
    declared: false,
  },
  {
    name: "sampling with tools under sampling.tools",
    request: SAMPLING_TOOLS,
    capabilities: { sampling: { tools: {} } },
    declared: true,
  },
  { name: "roots under no capabilities", request: ROOTS, capabilities: {}, declared: false },
  {
    name: "roots under roots",
    request: ROOTS,
    capabilities: { roots: { listChanged: true } },
    declared: true,
  },
];

for (const row of ROWS) {
  Deno.test(`declares() says ${row.declared} for ${row.name}`, () => {
    assert.equal(declares(row.capabilities, row.request), row.declared);
  });
}

const asked = collectInputRequests([
  { jsonrpc: "2.0", id: 1, method: "elicitation/create", params: FORM.params },
  { jsonrpc: "2.0", id: 2, method: "sampling/createMessage", params: SAMPLING_TOOLS.params },
  { jsonrpc: "2.0", id: 3, method: "roots/list" },
]).asked;

Deno.test("splitByCapabilities() refuses what the request lacks and merges what it needs", () => {
  const split = splitByCapabilities(asked, { sampling: {}, roots: {} });
  assert.deepEqual(split.allowed.map((entry) => entry.key), ["roots-1"]);
  assert.deepEqual(split.refused.map((entry) => entry.key), ["elicitation-1", "sampling-1"]);
  assert.deepEqual(split.requiredCapabilities, {
    elicitation: { form: {} },
    sampling: { tools: {} },
  });
  assert.deepEqual(
    splitByCapabilities(asked, { elicitation: {}, sampling: { tools: {} }, roots: {} }),
    { allowed: asked, refused: [] },
  );
});

Deno.test("capabilityRefusal() is -32021 with data.requiredCapabilities", () => {
  assert.deepEqual(capabilityRefusal(8, { sampling: {}, elicitation: { form: {} } }), {
    jsonrpc: "2.0",
    id: 8,
    error: {
      code: -32021,
      message: "This request needs client capabilities it did not declare (sampling, " +
        'elicitation.form): declare them in params._meta["io.modelcontextprotocol/' +
        'clientCapabilities"] and send the request again',
      data: { requiredCapabilities: { sampling: {}, elicitation: { form: {} } } },
    },
  });
});

Deno.test("refusalForBackend() answers the backend's request as a client without it would", () => {
  assert.deepEqual(refusalForBackend(asked[2]), {
    jsonrpc: "2.0",
    id: 3,
    error: {
      code: -32601,
      message: "The client of this request did not declare roots, so it cannot answer roots/list",
    },
  });
});
