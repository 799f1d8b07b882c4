import assert from "node:assert/strict";
import { testClock } from "../../tests/fixtures/clock.ts";
import { Secret } from "../core/secret.ts";
import { JwtError, signJwt } from "../crypto/jwt.ts";
import { deriveHmacKey } from "../crypto/keys.ts";
import { ACCESS_TOKEN_TYPE, AccessTokens } from "./access_tokens.ts";

const ISSUER = "https://gw.example.com";
const ALPHA = `${ISSUER}/alpha`;

async function tokens() {
  const clock = testClock();
  clock.freeze();
  const key = await deriveHmacKey(
    new Secret("access-tokens-test-secret-0123456789"),
    "jwt-signing",
  );
  return {
    key,
    clock,
    tokens: new AccessTokens({ issuer: ISSUER, keys: [key], ttlMs: 60_000, clock }),
  };
}

const GRANT = {
  subject: "oidc:alice",
  clientId: "client",
  audience: [ALPHA],
  scope: "mcp",
  familyId: "family-1",
};

Deno.test("AccessTokens.issue() writes the groups as a list of names, and leaves the claim out when there are none", async () => {
  const { tokens: at } = await tokens();
  const withGroups = await at.verify(
    await at.issue({ ...GRANT, groups: ["editors", "ops"] }),
    ALPHA,
  );
  assert.deepEqual(withGroups.groups, ["editors", "ops"]);
  assert.equal(withGroups.fam, "family-1");
  const without = await at.verify(await at.issue({ ...GRANT, groups: [] }), ALPHA);
  assert.equal("groups" in without, false);
});

Deno.test("AccessTokens.verify() refuses a token whose groups claim is not a list of names", async () => {
  const { key, clock, tokens: at } = await tokens();
  const now = Math.floor(clock.now() / 1000);
  for (const groups of ["editors", [1], { editors: true }]) {
    const forged = await signJwt(key, ACCESS_TOKEN_TYPE, {
      iss: ISSUER,
      sub: "oidc:alice",
      aud: [ALPHA],
      iat: now,
      exp: now + 60,
      client_id: "client",
      scope: "mcp",
      fam: "family-1",
      groups,
    });
    await assert.rejects(
      at.verify(forged, ALPHA),
      (error: unknown) =>
        error instanceof JwtError && error.code === "malformed" &&
        error.message === "the token's groups are not a list of names",
    );
  }
});
