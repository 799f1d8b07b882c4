import assert from "node:assert/strict";
import type { RpcNotification, RpcRequest } from "../protocol/jsonrpc.ts";
import { ProgressTokens } from "./progress_tokens.ts";

const call = (id: number, token?: string | number): RpcRequest => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: token === undefined
    ? { name: "slow" }
    : { name: "slow", _meta: { progressToken: token, trace: "t" } },
});
const progress = (token: string | number, value: number): RpcNotification => ({
  jsonrpc: "2.0",
  method: "notifications/progress",
  params: { progressToken: token, progress: value, total: 100 },
});

/** Each row: a caller's request beside the same request on the shared link. */
const ROWS = [
  { caller: "ann-client-1", request: call(1, 1), linked: call(1, "gh-progress-1") },
  { caller: "ann-client-2", request: call(1, 1), linked: call(1, "gh-progress-2") },
  { caller: "ann-client-3", request: call(2, "p"), linked: call(2, "gh-progress-3") },
].map((row, index) => ({ ...row, linkToken: `gh-progress-${index + 1}` }));

Deno.test("ProgressTokens.inbound() gives each caller's token one of the link's own", () => {
  const tokens = new ProgressTokens();
  for (const row of ROWS) {
    const { request, linkToken } = tokens.inbound(row.caller, row.request);
    assert.deepEqual(request, row.linked);
    assert.equal(linkToken, row.linkToken);
  }
  assert.equal(tokens.size, 3);
});

Deno.test("ProgressTokens.outbound() gives progress back to its caller with its own token", () => {
  const tokens = new ProgressTokens();
  for (const row of ROWS) tokens.inbound(row.caller, row.request);
  assert.deepEqual(tokens.outbound(progress("gh-progress-2", 50)), {
    caller: "ann-client-2",
    notification: progress(1, 50),
  });
  assert.deepEqual(tokens.outbound(progress("gh-progress-3", 10)), {
    caller: "ann-client-3",
    notification: progress("p", 10),
  });
});

Deno.test("ProgressTokens.outbound() drops progress for unknown or released tokens", () => {
  const tokens = new ProgressTokens();
  const { linkToken } = tokens.inbound("c", call(1, 1));
  assert.equal(tokens.outbound(progress(1, 5)), undefined);
  assert.equal(tokens.outbound({ jsonrpc: "2.0", method: "notifications/message" }), undefined);
  tokens.release(linkToken);
  assert.equal(tokens.outbound(progress(linkToken!, 5)), undefined);
  assert.equal(tokens.size, 0);
});

Deno.test("ProgressTokens.inbound() leaves a request without a progress token alone", () => {
  const tokens = new ProgressTokens();
  const request = call(3);
  assert.deepEqual(tokens.inbound("c", request), { request });
  assert.equal(tokens.size, 0);
});
