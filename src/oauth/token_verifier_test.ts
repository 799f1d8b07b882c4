import assert from "node:assert/strict";
import {
  ALPHA,
  ALPHA_NAME,
  type AuthParts,
  BETA,
  BETA_NAME,
  LIFETIMES,
  openAuthParts,
  withAuthParts,
} from "../../tests/fixtures/auth_parts.ts";
import { Secret } from "../core/secret.ts";
import { decodeBase64Url, encodeBase64Url } from "../crypto/base64url.ts";
import { type JwtClaims, signJwt } from "../crypto/jwt.ts";
import { AccessTokens } from "./access_tokens.ts";
import { Revocations } from "./revocations.ts";
import { TokenVerifier } from "./token_verifier.ts";

const EXPIRED = {
  ok: false,
  description: "the access token has expired; refresh it or sign in again",
};
const REVOKED = {
  ok: false,
  description: "this grant was revoked: sign in again through your MCP client",
};
const BAD_SIGNATURE = { ok: false, description: "the access token's signature is invalid" };
const MALFORMED = { ok: false, description: "the access token is malformed" };
/** The leeway for clocks that disagree (SKEW_SECONDS), in ms. */
const SKEW_MS = 30_000;

/** A live grant (opened from a code, as the token endpoint does) and its id. */
async function openGrant(parts: AuthParts): Promise<string> {
  const code = await parts.grants.issueCode({
    clientId: "gh_client",
    identity: { subject: "oidc:alice" },
    audience: [ALPHA],
    scope: "mcp",
    redirectUri: "https://app.example.com/callback",
    codeChallenge: "unused-here",
  });
  const redemption = await parts.grants.redeemCode(code);
  assert.ok(redemption.ok);
  return redemption.familyId;
}

async function issue(
  parts: AuthParts,
  familyId: string,
  audience = [ALPHA],
  accessTokens = parts.accessTokens,
): Promise<string> {
  return await accessTokens.issue({
    subject: "oidc:alice",
    email: "alice@example.com",
    clientId: "gh_client",
    audience,
    scope: "mcp",
    familyId,
  });
}

/** A verifier as another replica has it: its own revocations, read from storage on `refresh`. */
function newVerifier(
  parts: AuthParts,
  revocations = new Revocations({ store: parts.store, clock: parts.clock }),
): TokenVerifier {
  return new TokenVerifier({
    issuer: parts.issuer,
    accessTokens: parts.accessTokens,
    grants: parts.grants,
    revocations,
    clock: parts.clock,
  });
}

const json = (value: unknown) => encodeBase64Url(new TextEncoder().encode(JSON.stringify(value)));

function claimsOf(token: string): JwtClaims {
  return JSON.parse(new TextDecoder().decode(decodeBase64Url(token.split(".")[1])));
}

Deno.test("TokenVerifier.verify() returns the claims of a token for its service", async () => {
  await withAuthParts(async (parts) => {
    const familyId = await openGrant(parts);
    const check = await parts.verifier.verify(await issue(parts, familyId), ALPHA_NAME);
    assert.ok(check.ok);
    assert.equal(check.claims.iss, parts.issuer);
    assert.equal(check.claims.sub, "oidc:alice");
    assert.equal(check.claims.fam, familyId);
    assert.equal(check.claims.exp, check.claims.iat! + LIFETIMES.accessMs / 1000);
  });
});

Deno.test("TokenVerifier.verify() accepts a token until its lifetime and the clock leeway have passed, and refuses it at that instant", async () => {
  await withAuthParts(async (parts) => {
    const token = await issue(parts, await openGrant(parts));
    // `parts.verifier` keeps what it verified; a new verifier checks the token afresh.
    assert.ok((await parts.verifier.verify(token, ALPHA_NAME)).ok);
    parts.clock.advance(LIFETIMES.accessMs + SKEW_MS - 1);
    assert.ok((await parts.verifier.verify(token, ALPHA_NAME)).ok);
    assert.ok((await newVerifier(parts).verify(token, ALPHA_NAME)).ok);
    parts.clock.advance(1);
    assert.deepEqual(await parts.verifier.verify(token, ALPHA_NAME), EXPIRED);
    assert.deepEqual(await newVerifier(parts).verify(token, ALPHA_NAME), EXPIRED);
  });
});

Deno.test("TokenVerifier.verify() refuses a token whose audience does not name the service", async () => {
  await withAuthParts(async (parts) => {
    const token = await issue(parts, await openGrant(parts), [ALPHA]);
    assert.ok((await parts.verifier.verify(token, ALPHA_NAME)).ok);
    assert.deepEqual(await parts.verifier.verify(token, BETA_NAME), {
      ok: false,
      description: `the access token is not valid for ${BETA}; obtain a token for this service`,
    });
  });
});

Deno.test("TokenVerifier.verify() refuses a token from another issuer signed with the same key", async () => {
  await withAuthParts(async (parts) => {
    const elsewhere = new AccessTokens({
      issuer: "https://other-gateway.example.com",
      keys: parts.keys,
      ttlMs: LIFETIMES.accessMs,
      clock: parts.clock,
    });
    // Its audience even names this gateway's service.
    const token = await issue(parts, await openGrant(parts), [ALPHA], elsewhere);
    assert.deepEqual(await parts.verifier.verify(token, ALPHA_NAME), {
      ok: false,
      description: "the access token was issued by another authorization server",
    });
  });
});

Deno.test("TokenVerifier.verify() refuses a token whose claims or signature were changed", async () => {
  await withAuthParts(async (parts) => {
    const token = await issue(parts, await openGrant(parts), [ALPHA]);
    const [header, , signature] = token.split(".");
    const widened = json({ ...claimsOf(token), aud: [ALPHA, BETA] });
    assert.deepEqual(
      await parts.verifier.verify(`${header}.${widened}.${signature}`, BETA_NAME),
      BAD_SIGNATURE,
    );
    const flipped = signature.slice(0, 10) + (signature[10] === "A" ? "B" : "A") +
      signature.slice(11);
    assert.deepEqual(
      await parts.verifier.verify(token.replace(signature, flipped), ALPHA_NAME),
      BAD_SIGNATURE,
    );
  });
});

Deno.test("TokenVerifier.verify() refuses a token signed under another master secret, and accepts one under a previous secret still listed", async () => {
  await withAuthParts(async (parts) => {
    const old = new Secret("the-previous-master-secret-0123456789-abcdefg");
    const oldParts = await openAuthParts({ master: old });
    try {
      const familyId = await openGrant(parts);
      const oldToken = await issue(parts, familyId, [ALPHA], oldParts.accessTokens);
      assert.deepEqual(await parts.verifier.verify(oldToken, ALPHA_NAME), BAD_SIGNATURE);
      const rotated = await openAuthParts({ previous: [old] });
      try {
        const rotatedFamily = await openGrant(rotated);
        const stillValid = await issue(rotated, rotatedFamily, [ALPHA], oldParts.accessTokens);
        assert.ok((await rotated.verifier.verify(stillValid, ALPHA_NAME)).ok);
      } finally {
        rotated.close();
      }
    } finally {
      oldParts.close();
    }
  });
});

Deno.test("TokenVerifier.verify() refuses alg none, with or without a signature", async () => {
  await withAuthParts(async (parts) => {
    const claims = claimsOf(await issue(parts, await openGrant(parts)));
    const unsigned = `${json({ alg: "none", typ: "at+jwt" })}.${json(claims)}`;
    assert.deepEqual(await parts.verifier.verify(`${unsigned}.`, ALPHA_NAME), MALFORMED);
    assert.deepEqual(await parts.verifier.verify(`${unsigned}.c2ln`, ALPHA_NAME), {
      ok: false,
      description: "the access token's algorithm is not accepted",
    });
  });
});

Deno.test("TokenVerifier.verify() refuses a token of another type signed with the right key", async () => {
  await withAuthParts(async (parts) => {
    const claims = claimsOf(await issue(parts, await openGrant(parts)));
    const idTokenLike = await signJwt(parts.keys[0], "JWT", claims);
    assert.deepEqual(await parts.verifier.verify(idTokenLike, ALPHA_NAME), {
      ok: false,
      description: "the access token has the wrong type (expected at+jwt)",
    });
  });
});

Deno.test("TokenVerifier.verify() refuses a signed token without its grant, and a refresh token", async () => {
  await withAuthParts(async (parts) => {
    const { fam: _fam, ...claims } = claimsOf(await issue(parts, await openGrant(parts)));
    const orphan = await signJwt(parts.keys[0], "at+jwt", claims);
    assert.deepEqual(await parts.verifier.verify(orphan, ALPHA_NAME), MALFORMED);
    // Refresh tokens are opaque: one presented as an access token never passes.
    const code = await parts.grants.issueCode({
      clientId: "gh_client",
      identity: { subject: "oidc:alice" },
      audience: [ALPHA],
      scope: "mcp",
      redirectUri: "https://app.example.com/callback",
      codeChallenge: "unused-here",
    });
    const redemption = await parts.grants.redeemCode(code);
    assert.ok(redemption.ok);
    const refresh = await parts.grants.issueRefresh(redemption.familyId, redemption.record);
    assert.deepEqual(await parts.verifier.verify(refresh!, ALPHA_NAME), MALFORMED);
  });
});

Deno.test("TokenVerifier.verify() refuses a token issued further ahead than the clock leeway", async () => {
  await withAuthParts(async (parts) => {
    const familyId = await openGrant(parts);
    const ahead = (ms: number) =>
      new AccessTokens({
        issuer: parts.issuer,
        keys: parts.keys,
        ttlMs: LIFETIMES.accessMs,
        clock: { ...parts.clock, now: () => parts.clock.now() + ms },
      });
    const within = await issue(parts, familyId, [ALPHA], ahead(SKEW_MS));
    assert.ok((await parts.verifier.verify(within, ALPHA_NAME)).ok);
    const beyond = await issue(parts, familyId, [ALPHA], ahead(SKEW_MS + 1_000));
    assert.deepEqual(await parts.verifier.verify(beyond, ALPHA_NAME), {
      ok: false,
      description: "the access token is not valid yet; check the clocks",
    });
  });
});

Deno.test("TokenVerifier.verify() refuses a token of a grant revoked on this replica at once, the verified-token cache notwithstanding", async () => {
  await withAuthParts(async (parts) => {
    const familyId = await openGrant(parts);
    const seen = await issue(parts, familyId);
    const unseen = await issue(parts, familyId);
    assert.ok((await parts.verifier.verify(seen, ALPHA_NAME)).ok);
    await parts.grants.revokeFamily(familyId);
    assert.deepEqual(await parts.verifier.verify(seen, ALPHA_NAME), REVOKED);
    assert.deepEqual(await parts.verifier.verify(unseen, ALPHA_NAME), REVOKED);
  });
});

Deno.test("TokenVerifier.verify() refuses a token of a grant revoked on another replica once its revocations are read again, and reads storage once per grant, not per call", async () => {
  await withAuthParts(async (parts) => {
    const familyId = await openGrant(parts);
    const token = await issue(parts, familyId);
    let reads = 0;
    const revocations = new Revocations({ store: parts.store, clock: parts.clock });
    const grants = parts.grants;
    const counting = Object.assign(Object.create(grants), {
      liveFamily: (id: string) => (reads++, grants.liveFamily(id)),
    });
    const other = new TokenVerifier({
      issuer: parts.issuer,
      accessTokens: parts.accessTokens,
      grants: counting,
      revocations,
      clock: parts.clock,
    });
    for (let i = 0; i < 5; i++) assert.ok((await other.verify(token, ALPHA_NAME)).ok);
    assert.equal(reads, 1, "one read of the grant, then none");
    await parts.grants.revokeFamily(familyId);
    // Until this replica reads the revocations again it does not know (no read per call)...
    assert.ok((await other.verify(token, ALPHA_NAME)).ok);
    assert.equal(reads, 1);
    // ...and once it has, it refuses the token it had cached as verified.
    await revocations.refresh();
    assert.deepEqual(await other.verify(token, ALPHA_NAME), REVOKED);
    assert.equal(reads, 1);
  });
});

Deno.test("TokenVerifier.verify() refuses a token whose grant the store does not know", async () => {
  await withAuthParts(async (parts) => {
    const token = await issue(parts, "no-such-grant");
    assert.deepEqual(await parts.verifier.verify(token, ALPHA_NAME), REVOKED);
  });
});
