import assert from "node:assert/strict";
import { defaultMaxConnections } from "./descriptors.ts";

Deno.test("defaultMaxConnections() leaves descriptors for everything else, within bounds", () => {
  assert.equal(defaultMaxConnections(undefined), 1_000);
  assert.equal(defaultMaxConnections(1_024), 170);
  assert.equal(defaultMaxConnections(20_000), 6_496);
  assert.equal(defaultMaxConnections(1_048_576), 10_000);
  assert.equal(defaultMaxConnections(256), 16);
});
