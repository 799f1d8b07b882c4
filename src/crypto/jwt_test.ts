import assert from "node:assert/strict";
import { Secret } from "../core/secret.ts";
import { encodeBase64Url } from "./base64url.ts";
import { JwtError, signJwt, verifyJwt, type VerifyOptions } from "./jwt.ts";
import { deriveHmacKey } from "./keys.ts";

const master = new Secret("m".repeat(48));
const key = await deriveHmacKey(master, "jwt-signing");
const otherPurpose = await deriveHmacKey(master, "cookie-mac");
const NOW = 1_800_000_000;
const claims = { iss: "https://gw", sub: "alice", aud: ["https://gw/a"], iat: NOW, exp: NOW + 60 };
const options: VerifyOptions = {
  keys: [key],
  typ: "at+jwt",
  issuer: "https://gw",
  audience: "https://gw/a",
  now: NOW,
  skewSeconds: 30,
};

async function expectCode(token: string, code: string, overrides: Partial<VerifyOptions> = {}) {
  await assert.rejects(
    () => verifyJwt(token, { ...options, ...overrides }),
    (error: unknown) => error instanceof JwtError && error.code === code,
  );
}

const json = (value: unknown) => encodeBase64Url(new TextEncoder().encode(JSON.stringify(value)));

Deno.test("verifyJwt() returns the claims of a token it signed", async () => {
  const token = await signJwt(key, "at+jwt", claims);
  assert.deepEqual((await verifyJwt(token, options)).sub, "alice");
});

Deno.test("verifyJwt() refuses a token for another audience, issuer or type", async () => {
  const token = await signJwt(key, "at+jwt", claims);
  await expectCode(token, "wrong_audience", { audience: "https://gw/b" });
  await expectCode(token, "wrong_issuer", { issuer: "https://other" });
  await expectCode(await signJwt(key, "JWT", claims), "wrong_type");
});

Deno.test("verifyJwt() refuses expired tokens beyond the skew, accepts within it", async () => {
  const token = await signJwt(key, "at+jwt", claims);
  await verifyJwt(token, { ...options, now: NOW + 80 });
  await expectCode(token, "expired", { now: NOW + 91 });
});

Deno.test("verifyJwt() refuses alg none, a tampered payload and a key of another purpose", async () => {
  const token = await signJwt(key, "at+jwt", claims);
  const [header, , signature] = token.split(".");
  await expectCode(`${json({ alg: "none", typ: "at+jwt" })}.${json(claims)}.`, "malformed");
  await expectCode(
    `${json({ alg: "none", typ: "at+jwt" })}.${json(claims)}.${signature}`,
    "unsupported_algorithm",
  );
  await expectCode(
    `${header}.${json({ ...claims, sub: "mallory" })}.${signature}`,
    "bad_signature",
  );
  await expectCode(await signJwt(otherPurpose, "at+jwt", claims), "bad_signature");
});

Deno.test("verifyJwt() accepts tokens signed with a previous key during rotation", async () => {
  const oldKey = await deriveHmacKey(new Secret("o".repeat(48)), "jwt-signing");
  const token = await signJwt(oldKey, "at+jwt", claims);
  await expectCode(token, "bad_signature");
  assert.deepEqual((await verifyJwt(token, { ...options, keys: [key, oldKey] })).sub, "alice");
});
