import assert from "node:assert/strict";
import type { RpcResponse } from "../protocol/jsonrpc.ts";
import type { Json } from "./json_shape.ts";
import {
  errorFor2026,
  responseFor2025,
  responseFor2026,
  resultFor2025,
  resultFor2026,
} from "./results.ts";

const SERVER_INFO = { name: "files", version: "1.2.0" };
const INFO = "io.modelcontextprotocol/serverInfo";
const TOOL = { name: "echo", inputSchema: { type: "object" } };
const HINTS = { resultType: "complete", ttlMs: 0, cacheScope: "private" };

/** Each row: a 2025 backend's result beside what a 2026 client gets for it. */
const TO_2026: { name: string; method: string; r2025: Json; r2026: Json; info?: Json }[] = [
  {
    name: "adds resultType, cache hints and serverInfo to tools/list",
    method: "tools/list",
    r2025: { tools: [TOOL] },
    r2026: { tools: [TOOL], ...HINTS, _meta: { [INFO]: SERVER_INFO } },
  },
  ...["prompts/list", "resources/list", "resources/templates/list", "resources/read"].map(
    (method) => ({
      name: `adds cache hints to ${method}`,
      method,
      r2025: { items: [] },
      r2026: { items: [], ...HINTS, _meta: { [INFO]: SERVER_INFO } },
    }),
  ),
  {
    name: "adds resultType but no cache hints to tools/call",
    method: "tools/call",
    r2025: { content: [{ type: "text", text: "hi" }] },
    r2026: {
      content: [{ type: "text", text: "hi" }],
      resultType: "complete",
      _meta: { [INFO]: SERVER_INFO },
    },
  },
  {
    name: "keeps cache hints and resultType a result already carries",
    method: "tools/list",
    r2025: { tools: [], resultType: "complete", ttlMs: 60_000, cacheScope: "public" },
    r2026: {
      tools: [],
      resultType: "complete",
      ttlMs: 60_000,
      cacheScope: "public",
      _meta: { [INFO]: SERVER_INFO },
    },
  },
  {
    name: "keeps the result's own _meta keys and serverInfo",
    method: "completion/complete",
    r2025: { completion: { values: [] }, _meta: { trace: "t1", [INFO]: { name: "own" } } },
    r2026: {
      completion: { values: [] },
      resultType: "complete",
      _meta: { trace: "t1", [INFO]: { name: "own" } },
    },
  },
  {
    name: "adds no _meta when no serverInfo is known",
    method: "resources/read",
    r2025: { contents: [] },
    r2026: { contents: [], ...HINTS },
    info: undefined,
  },
];

for (const row of TO_2026) {
  Deno.test(`resultFor2026() ${row.name}`, () => {
    const info = "info" in row ? row.info : SERVER_INFO;
    assert.deepEqual(resultFor2026(row.method, row.r2025, info), row.r2026);
  });
}

/** Each row: a 2026 backend's result beside what a 2025 client gets for it. */
const TO_2025: { name: string; method: string; r2026: Json; r2025: Json }[] = [
  {
    name: "keeps resultType, cache hints and serverInfo, which 2025 readers ignore",
    method: "tools/list",
    r2026: { tools: [TOOL], ...HINTS, _meta: { [INFO]: SERVER_INFO } },
    r2025: { tools: [TOOL], ...HINTS, _meta: { [INFO]: SERVER_INFO } },
  },
  {
    name: "drops an outputSchema whose root is not an object, keeps the object ones",
    method: "tools/list",
    r2026: {
      tools: [
        { ...TOOL, name: "list", outputSchema: { type: "array", items: { type: "string" } } },
        { ...TOOL, name: "any", outputSchema: { anyOf: [{ type: "string" }] } },
        { ...TOOL, name: "obj", outputSchema: { type: "object", properties: {} } },
      ],
      ...HINTS,
    },
    r2025: {
      tools: [
        { ...TOOL, name: "list" },
        { ...TOOL, name: "any" },
        { ...TOOL, name: "obj", outputSchema: { type: "object", properties: {} } },
      ],
      ...HINTS,
    },
  },
  {
    name: "drops a structuredContent that is not an object",
    method: "tools/call",
    r2026: { content: [{ type: "text", text: "[1,2]" }], structuredContent: [1, 2] },
    r2025: { content: [{ type: "text", text: "[1,2]" }] },
  },
  {
    name: "keeps a structuredContent that is an object",
    method: "tools/call",
    r2026: { content: [], structuredContent: { n: 1 }, resultType: "complete" },
    r2025: { content: [], structuredContent: { n: 1 }, resultType: "complete" },
  },
];

for (const row of TO_2025) {
  Deno.test(`resultFor2025() ${row.name}`, () => {
    assert.deepEqual(resultFor2025(row.method, row.r2026), row.r2025);
  });
}

const ERRORS = [
  {
    name: "turns -32002 (resource not found) into -32602 and keeps its data",
    e2025: { code: -32002, message: "Resource not found", data: { uri: "file:///x" } },
    e2026: { code: -32602, message: "Resource not found", data: { uri: "file:///x" } },
  },
  {
    name: "leaves other codes alone",
    e2025: { code: -32601, message: "Method not found" },
    e2026: { code: -32601, message: "Method not found" },
  },
];

for (const row of ERRORS) {
  Deno.test(`errorFor2026() ${row.name}`, () => {
    assert.deepEqual(errorFor2026(row.e2025), row.e2026);
  });
}

Deno.test("responseFor2026() translates the result or the error of a response", () => {
  const ok: RpcResponse = { jsonrpc: "2.0", id: 4, result: { contents: [] } };
  assert.deepEqual(responseFor2026("resources/read", ok), {
    jsonrpc: "2.0",
    id: 4,
    result: { contents: [], ...HINTS },
  });
  const missing: RpcResponse = { jsonrpc: "2.0", id: 5, error: { code: -32002, message: "gone" } };
  assert.deepEqual(responseFor2026("resources/read", missing), {
    jsonrpc: "2.0",
    id: 5,
    error: { code: -32602, message: "gone" },
  });
});

Deno.test("responseFor2025() translates a result and passes an error through", () => {
  const ok: RpcResponse = { jsonrpc: "2.0", id: 6, result: { content: [], structuredContent: 3 } };
  assert.deepEqual(responseFor2025("tools/call", ok), {
    jsonrpc: "2.0",
    id: 6,
    result: { content: [] },
  });
  const failed: RpcResponse = { jsonrpc: "2.0", id: 7, error: { code: -32021, message: "no" } };
  assert.deepEqual(responseFor2025("tools/call", failed), failed);
});
