import assert from "node:assert/strict";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "./json_depth.ts";

const nested = (depth: number, open = "[", close = "]") => open.repeat(depth) + close.repeat(depth);

Deno.test("nestsDeeperThan() refuses one level past the limit and accepts the limit itself", () => {
  assert.equal(nestsDeeperThan(nested(MAX_JSON_DEPTH)), false);
  assert.equal(nestsDeeperThan(nested(MAX_JSON_DEPTH + 1)), true);
  assert.equal(nestsDeeperThan(nested(100_000)), true);
  // Objects and arrays count alike.
  const mixed = '{"a":['.repeat(65) + "1" + "]}".repeat(65);
  assert.equal(nestsDeeperThan(mixed), true);
  assert.equal(nestsDeeperThan('{"a":['.repeat(64) + "1" + "]}".repeat(64)), false);
});

Deno.test("nestsDeeperThan() does not count brackets inside strings, escaped quotes included", () => {
  const inString = JSON.stringify({ text: "[".repeat(10_000) + '\\"[[[' + '"' + "{".repeat(500) });
  assert.equal(nestsDeeperThan(inString), false);
  // A string ending in an escaped backslash ends there: the brackets after it count.
  const afterBackslash = `["a\\\\",${nested(MAX_JSON_DEPTH)}]`;
  assert.equal(JSON.parse(afterBackslash).length, 2);
  assert.equal(nestsDeeperThan(afterBackslash), true);
  // An escaped quote does not end the string: the brackets after it are text.
  assert.equal(nestsDeeperThan(`["a\\"${"[".repeat(200)}"]`), false);
});

Deno.test("nestsDeeperThan() leaves text that is not JSON to JSON.parse", () => {
  assert.equal(nestsDeeperThan('"unterminated ' + "[".repeat(500)), false);
  assert.equal(nestsDeeperThan("]".repeat(500) + "[".repeat(100)), false);
  assert.equal(nestsDeeperThan(""), false);
});
