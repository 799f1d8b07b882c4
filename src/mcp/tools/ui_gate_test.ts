import assert from "node:assert/strict";
import type { RpcRequest, RpcResponse } from "../protocol/jsonrpc.ts";
import { uiReadRefusal } from "./ui_gate.ts";

const READ: RpcRequest = {
  jsonrpc: "2.0",
  id: 7,
  method: "resources/read",
  params: { uri: "ui://clock/app.html" },
};
/** Only `public_time` may be used; `admin_clock` is withheld, and names the UI read above. */
const GATE = { allows: (name: string) => name === "public_time" };
const withUi = (name: string) => ({ name, _meta: { ui: { resourceUri: "ui://clock/app.html" } } });
const answer = (result: unknown): RpcResponse => ({ jsonrpc: "2.0", id: 1, result } as RpcResponse);

Deno.test("uiReadRefusal() refuses the UI that only a withheld tool names", async () => {
  const refusal = await uiReadRefusal(
    READ,
    GATE,
    "clock",
    () => Promise.resolve(answer({ tools: [withUi("admin_clock")] })),
  );
  assert.equal(
    (refusal as { error?: { data?: { reason?: string } } }).error?.data?.reason,
    "tool_not_allowed",
  );
});

Deno.test("uiReadRefusal() lets the read on when a tool the caller may use names the UI too", async () => {
  const refusal = await uiReadRefusal(
    READ,
    GATE,
    "clock",
    () => Promise.resolve(answer({ tools: [withUi("admin_clock"), withUi("public_time")] })),
  );
  assert.equal(refusal, undefined);
});

Deno.test("uiReadRefusal() lets the read on when the server answers that it has no tools", async () => {
  const noTools = {
    jsonrpc: "2.0",
    id: 1,
    error: { code: -32601, message: "Method not found" },
  } as RpcResponse;
  assert.equal(await uiReadRefusal(READ, GATE, "clock", () => Promise.resolve(noTools)), undefined);
});

Deno.test("uiReadRefusal() refuses for now when the listing gets no answer (fails closed)", async () => {
  const refusal = await uiReadRefusal(
    READ,
    GATE,
    "clock",
    () => Promise.reject(new Error("backend timed out")),
  ) as { error?: { code: number; message: string; data?: { reason?: string } } };
  assert.equal(refusal.error?.data?.reason, "tools_unavailable");
  assert.equal(refusal.error?.code, -32000);
  assert.match(refusal.error!.message, /did not answer the listing of its tools.*try again/);
});
