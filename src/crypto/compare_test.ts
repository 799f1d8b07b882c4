import assert from "node:assert/strict";
import { sha256Base64Url } from "./base64url.ts";
import { matchesHash, timingSafeEqual, timingSafeEqualText } from "./compare.ts";

Deno.test("timingSafeEqual() compares equal and unequal arrays", () => {
  assert.equal(timingSafeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 3])), true);
  assert.equal(timingSafeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 4])), false);
  assert.equal(timingSafeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2, 3])), false);
});

Deno.test("timingSafeEqualText() accepts only the exact string", () => {
  assert.equal(timingSafeEqualText("dev-token", "dev-token"), true);
  assert.equal(timingSafeEqualText("dev-toke", "dev-token"), false);
  assert.equal(timingSafeEqualText("dev-token ", "dev-token"), false);
  assert.equal(timingSafeEqualText("", "dev-token"), false);
});

Deno.test("matchesHash() accepts only the secret whose hash is stored", async () => {
  const stored = await sha256Base64Url("client-secret");
  assert.equal(await matchesHash("client-secret", stored), true);
  assert.equal(await matchesHash("client-secreT", stored), false);
  assert.equal(await matchesHash("", stored), false);
  assert.equal(await matchesHash("client-secret", ""), false);
});
