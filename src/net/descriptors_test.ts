import assert from "node:assert/strict";
import {
  defaultMaxConnections,
  limitFromProc,
  limitFromShell,
  openFileLimit,
  parseLimit,
} from "./descriptors.ts";

Deno.test("defaultMaxConnections() leaves descriptors for everything else, within bounds", () => {
  assert.equal(defaultMaxConnections(undefined), 1_000);
  assert.equal(defaultMaxConnections(1_024), 170);
  assert.equal(defaultMaxConnections(20_000), 6_496);
  assert.equal(defaultMaxConnections(1_048_576), 10_000);
  assert.equal(defaultMaxConnections(256), 16);
});

Deno.test("limitFromShell() reports the soft limit /proc/self/limits shows (regression: the gateway, without every permission, read none and capped connections at 1,000)", () => {
  const proc = limitFromProc();
  if (proc === undefined) throw new Error("run this test with --allow-all, to compare with /proc");
  assert.equal(limitFromShell(), proc);
  assert.equal(openFileLimit(), proc);
});

Deno.test("parseLimit() reads a number and takes unlimited or garbage for unknown", () => {
  assert.equal(parseLimit("20000"), 20_000);
  assert.equal(parseLimit("unlimited"), undefined);
  assert.equal(parseLimit(""), undefined);
  assert.equal(parseLimit(undefined), undefined);
});
