import assert from "node:assert/strict";
import { testClock } from "../../../tests/fixtures/clock.ts";
import type { JSONRPCMessage } from "../../sdk.ts";
import type { RpcNotification } from "../protocol/jsonrpc.ts";
import { LinkCall, LinkChannel } from "./link_calls.ts";

const LOG = {
  jsonrpc: "2.0",
  method: "notifications/message",
  params: { level: "warning", data: "disk almost full" },
} as JSONRPCMessage;

function callWithLogs(id: string, logLevel?: "debug" | "error") {
  const call = new LinkCall(id, true, () => Promise.resolve(), testClock());
  const got: RpcNotification[] = [];
  call.logLevel = logLevel;
  call.onNotification = (notification) => got.push(notification);
  return { call, got };
}

Deno.test("LinkChannel.deliver() gives a backend log to the link's one call in flight, from its level up", () => {
  const channel = new LinkChannel(() => {}, () => {});
  const debug = callWithLogs("gh-1", "debug");
  channel.track(debug.call);
  channel.deliver(LOG);
  assert.equal(debug.got.length, 1);

  const quiet = new LinkChannel(() => {}, () => {});
  const errorsOnly = callWithLogs("gh-2", "error");
  quiet.track(errorsOnly.call);
  quiet.deliver(LOG);
  assert.equal(errorsOnly.got.length, 0, "a warning is below the error level it asked for");
});

Deno.test("LinkChannel.deliver() gives a backend log to nobody when several calls are in flight, or the one asked for none", () => {
  const channel = new LinkChannel(() => {}, () => {});
  const a = callWithLogs("gh-1", "debug");
  const b = callWithLogs("gh-2", "debug");
  channel.track(a.call);
  channel.track(b.call);
  channel.deliver(LOG);
  assert.deepEqual([a.got.length, b.got.length], [0, 0]);

  const unasked = new LinkChannel(() => {}, () => {});
  const none = callWithLogs("gh-3");
  unasked.track(none.call);
  unasked.deliver(LOG);
  assert.equal(none.got.length, 0);
});

Deno.test("LinkChannel.deliver() never hands a log to the listen streams", () => {
  const heard: RpcNotification[] = [];
  const channel = new LinkChannel(() => {}, (notification) => heard.push(notification));
  channel.deliver(LOG);
  assert.deepEqual(heard, []);
});
