import assert from "node:assert/strict";
import { isValidCodeVerifier, s256Challenge, verifyS256 } from "./pkce.ts";

// RFC 7636 Appendix B.
const VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

Deno.test("s256Challenge() matches the RFC 7636 Appendix B vector", async () => {
  assert.deepEqual(await s256Challenge(VERIFIER), CHALLENGE);
});

Deno.test("verifyS256() accepts the right verifier and refuses others", async () => {
  assert.deepEqual(await verifyS256(VERIFIER, CHALLENGE), true);
  assert.deepEqual(await verifyS256(VERIFIER.slice(0, -1) + "l", CHALLENGE), false);
  // plain PKCE: the verifier sent as the challenge
  assert.deepEqual(await verifyS256(VERIFIER, VERIFIER), false);
});

Deno.test("isValidCodeVerifier() enforces RFC 7636 length and alphabet", () => {
  assert.deepEqual(isValidCodeVerifier("a".repeat(42)), false);
  assert.deepEqual(isValidCodeVerifier("a".repeat(43)), true);
  assert.deepEqual(isValidCodeVerifier("a".repeat(128)), true);
  assert.deepEqual(isValidCodeVerifier("a".repeat(129)), false);
  assert.deepEqual(isValidCodeVerifier("a".repeat(42) + "+"), false);
});
