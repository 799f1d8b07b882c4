import assert from "node:assert/strict";
import { secretsEqual, timingSafeEqual } from "./compare.ts";

Deno.test("timingSafeEqual() compares equal and unequal arrays", () => {
  assert.equal(timingSafeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 3])), true);
  assert.equal(timingSafeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 4])), false);
  assert.equal(timingSafeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2, 3])), false);
});

Deno.test("secretsEqual() accepts only the exact secret, whatever the length", async () => {
  assert.equal(await secretsEqual("dev-token", "dev-token"), true);
  assert.equal(await secretsEqual("dev-toke", "dev-token"), false);
  assert.equal(await secretsEqual("dev-token ", "dev-token"), false);
  assert.equal(await secretsEqual("", "dev-token"), false);
});
