import assert from "node:assert/strict";
import { headerMarks, paramHeaders, ToolHeaderMarks } from "./param_headers.ts";

const SCHEMA = {
  type: "object",
  properties: {
    region: { type: "string", "x-mcp-header": "Region" },
    count: { type: "integer", "x-mcp-header": "Count" },
    dry: { type: "boolean", "x-mcp-header": "Dry-Run" },
    nested: {
      type: "object",
      properties: { id: { type: "string", "x-mcp-header": "Tenant" } },
    },
    spaced: { type: "string", "x-mcp-header": "has space" },
    list: { type: "array", "x-mcp-header": "List" },
    again: { type: "string", "x-mcp-header": "region" },
    plain: { type: "string" },
  },
};

Deno.test("headerMarks() finds the marks along properties, and leaves out invalid ones", () => {
  assert.deepEqual(headerMarks(SCHEMA), [
    { path: ["region"], header: "Region" },
    { path: ["count"], header: "Count" },
    { path: ["dry"], header: "Dry-Run" },
    { path: ["nested", "id"], header: "Tenant" },
  ]);
  assert.deepEqual(headerMarks({ type: "string", "x-mcp-header": "Root" }), []);
  assert.deepEqual(headerMarks(undefined), []);
});

Deno.test("paramHeaders() mirrors each present argument, base64 where it is not plain ASCII", () => {
  const marks = headerMarks(SCHEMA);
  assert.deepEqual(
    paramHeaders(marks, { region: "eu-west", count: 3, dry: false, nested: { id: "Zürich" } }),
    {
      "Mcp-Param-Region": "eu-west",
      "Mcp-Param-Count": "3",
      "Mcp-Param-Dry-Run": "false",
      "Mcp-Param-Tenant": `=?base64?${btoa("Z\xc3\xbcrich")}?=`,
    },
  );
  assert.deepEqual(paramHeaders(marks, { region: null, count: undefined }), {});
  assert.deepEqual(paramHeaders(marks, { region: " padded " }), {
    "Mcp-Param-Region": `=?base64?${btoa(" padded ")}?=`,
  });
});

Deno.test("ToolHeaderMarks.headersFor() uses the marks learned from tools/list pages", () => {
  const marks = new ToolHeaderMarks();
  marks.learn([{ name: "geo", inputSchema: SCHEMA }, { name: "plain", inputSchema: {} }, 7]);
  assert.equal(marks.knows("geo"), true);
  assert.equal(marks.knows("other"), false);
  assert.deepEqual(marks.headersFor("geo", { region: "us" }), { "Mcp-Param-Region": "us" });
  assert.deepEqual(marks.headersFor("plain", { region: "us" }), {});
  assert.deepEqual(marks.headersFor("other", { region: "us" }), {});
});
