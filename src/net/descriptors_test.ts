import assert from "node:assert/strict";
import {
  connectionCaps,
  defaultMaxConnections,
  descriptorsNeeded,
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

Deno.test("connectionCaps() gives the redirect listener a small cap out of the main port's descriptor budget (regression: both sized themselves from the whole limit, and 170 idle connections to the redirect port ran the gateway out of descriptors under ulimit -n 1024)", () => {
  const caps = connectionCaps(undefined, true, 1_024);
  assert.deepEqual(caps, { main: 106, redirect: 64, openFiles: 1_024, configured: false });
  assert.ok(descriptorsNeeded(caps) <= 1_024, `${descriptorsNeeded(caps)} descriptors`);
  // Without a redirect listener the main port has the whole budget, as before.
  assert.equal(connectionCaps(undefined, false, 1_024).main, 170);
  // A configured connections.max is kept; the redirect listener never gets more than it.
  assert.deepEqual(connectionCaps(40, true, 1_024), {
    main: 40,
    redirect: 40,
    openFiles: 1_024,
    configured: true,
  });
  assert.equal(connectionCaps(5_000, true, undefined).redirect, 64);
});
