import assert from "node:assert/strict";
import * as jose from "jose";
import {
  type DecodedJws,
  decodeJws,
  importPublicJwk,
  keyFits,
  PUBLIC_KEY_ALGORITHMS,
  verifyJws,
} from "./jws.ts";

async function signed(alg: string): Promise<{ token: string; jwk: jose.JWK }> {
  const { privateKey, publicKey } = await jose.generateKeyPair(alg, {
    extractable: true,
    ...(alg === "EdDSA" && { crv: "Ed25519" }),
  });
  const token = await new jose.SignJWT({ sub: "alice" })
    .setProtectedHeader({ alg, typ: "oauth-id-jag+jwt" })
    .sign(privateKey);
  return { token, jwk: await jose.exportJWK(publicKey) };
}

Deno.test("verifyJws() verifies RS256, PS256, ES256 and EdDSA signatures made by jose", async () => {
  for (const alg of PUBLIC_KEY_ALGORITHMS) {
    const { token, jwk } = await signed(alg);
    const jws = decodeJws(token) as DecodedJws;
    const key = await importPublicJwk(jwk, alg);
    assert.ok(key, `${alg} key imported`);
    assert.equal(await verifyJws(jws, key, alg), true, alg);
    // One changed byte of the payload breaks it.
    const [h, p, s] = token.split(".");
    const tampered = decodeJws(
      `${h}.${p.slice(0, -2)}${p.endsWith("A") ? "B" : "A"}${p.slice(-1)}.${s}`,
    );
    assert.equal(await verifyJws(tampered as DecodedJws, key, alg), false, `${alg} tampered`);
  }
});

Deno.test("keyFits() refuses a key whose type, curve, alg or use says otherwise", async () => {
  const { jwk: rsa } = await signed("RS256");
  const { jwk: ec } = await signed("ES256");
  assert.equal(keyFits(rsa, "RS256"), true);
  assert.equal(keyFits(rsa, "PS256"), true, "an RSA key without alg serves both RSA algorithms");
  assert.equal(keyFits({ ...rsa, alg: "RS256" }, "PS256"), false);
  assert.equal(keyFits({ ...rsa, use: "enc" }, "RS256"), false);
  assert.equal(keyFits(rsa, "ES256"), false);
  assert.equal(keyFits({ ...ec, crv: "P-384" }, "ES256"), false);
  assert.equal(
    await importPublicJwk({ ...rsa, n: (rsa.n as string).slice(0, 170) }, "RS256"),
    undefined,
    "an RSA modulus under 2048 bits is no key",
  );
  assert.equal(await importPublicJwk({ kty: "RSA", n: rsa.n, e: "!!" }, "RS256"), undefined);
});

Deno.test("decodeJws() says what is wrong without echoing the token", () => {
  assert.equal(decodeJws("a.b"), "it is not a compact JWS (three base64url parts)");
  assert.equal(decodeJws("!!.e30.AA"), "its header is not base64url JSON");
  assert.equal(decodeJws("e30.W10.AA"), "its payload is not base64url JSON");
  assert.equal(decodeJws("e30.e30.A"), "its signature is not base64url");
  assert.equal(decodeJws("x".repeat(20_000)), "it is longer than 16384 characters");
});
