import assert from "node:assert/strict";
import { sha256Base64Url } from "./base64url.ts";
import { equalsSecret, matchesHash } from "./compare.ts";

Deno.test("equalsSecret() accepts only the exact string, whichever side is longer", () => {
  assert.equal(equalsSecret("dev-token", "dev-token"), true);
  for (
    const [a, b] of [["dev-toke", "dev-token"], ["dev-token ", "dev-token"], ["", "dev-token"]]
  ) {
    assert.equal(equalsSecret(a, b), false, `${a} / ${b}`);
    assert.equal(equalsSecret(b, a), false, `${b} / ${a}`);
  }
});

Deno.test("matchesHash() accepts only the secret whose hash is stored", async () => {
  const stored = await sha256Base64Url("client-secret");
  assert.equal(await matchesHash("client-secret", stored), true);
  assert.equal(await matchesHash("client-secreT", stored), false);
  assert.equal(await matchesHash("", stored), false);
  assert.equal(await matchesHash("client-secret", ""), false);
});

Deno.test("equalsSecret() accepts only the exact secret, whatever the length of what is given", () => {
  const secret = "bench-static-token-0123456789abcdef";
  assert.equal(equalsSecret(secret, secret), true);
  assert.equal(equalsSecret("pässwörd", "pässwörd"), true);
  for (
    const given of [
      "",
      secret.slice(0, -1),
      `${secret}0`,
      secret.repeat(2),
      secret.toUpperCase(),
      `x${secret.slice(1)}`,
      "pässwörd",
    ]
  ) {
    assert.equal(equalsSecret(secret, given), false, given);
  }
  // What is given repeats the secret's own prefix: still refused, as its length differs.
  assert.equal(equalsSecret("abab", "ab"), false);
  assert.equal(equalsSecret("", ""), true);
  assert.equal(equalsSecret("", "a"), false);
});
