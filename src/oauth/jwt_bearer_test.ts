import assert from "node:assert/strict";
import * as jose from "jose";
import {
  ALPHA,
  exchange,
  ISSUER,
  openAuthParts,
  registerClient,
} from "../../tests/fixtures/auth_parts.ts";
import { sha256Base64Url } from "../crypto/base64url.ts";
import { KEYS } from "../store/keys.ts";
import { IssuerKeys } from "./issuer_keys.ts";
import { JWT_BEARER } from "./metadata.ts";
import { PersonGroups } from "./person_groups.ts";
import { OAuthError } from "./errors.ts";

const IDP = "https://login.example.com";
const SECRET = "unit-confidential-secret-0123456789abcdef";

async function setUp(groupsClaim?: string) {
  const parts = await openAuthParts();
  const { privateKey, publicKey } = await jose.generateKeyPair("ES256", { extractable: true });
  const jwk = { ...(await jose.exportJWK(publicKey)), kid: "k1" };
  const { client } = await registerClient(parts, {
    grant_types: [JWT_BEARER],
    redirect_uris: [],
    token_endpoint_auth_method: "client_secret_post",
  });
  await parts.store.set(KEYS.client(client.clientId), {
    ...client,
    clientSecretHash: await sha256Base64Url(SECRET),
  });
  const personGroups = new PersonGroups(parts.store, parts.clock, 86_400_000);
  parts.tokenDeps.jwtBearer = {
    policy: { audience: ISSUER, trustedIssuers: [IDP], maxLifetimeMs: 600_000 },
    keys: new IssuerKeys(() => Promise.resolve({ keys: [jwk] }), parts.clock),
    clock: parts.clock,
    grants: parts.grants,
    login: { issuer: IDP, kind: "oidc", groupsClaim },
    groupsAtLastLogin: (subject) => personGroups.groupsOf(subject),
    rememberGroups: (identity) => personGroups.remember(identity),
    onOutcome: () => {},
  };
  const present = async (claims: Record<string, unknown> = {}) => {
    const now = Math.floor(parts.clock.now() / 1000);
    const assertion = await new jose.SignJWT({
      iss: IDP,
      sub: "alice",
      aud: ISSUER,
      client_id: client.clientId,
      jti: crypto.randomUUID(),
      iat: now,
      exp: now + 300,
      resource: ALPHA,
      email: "alice@example.com",
      ...claims,
    }).setProtectedHeader({ alg: "ES256", typ: "oauth-id-jag+jwt", kid: "k1" }).sign(privateKey);
    return await exchange(
      parts,
      new URLSearchParams({
        grant_type: JWT_BEARER,
        assertion,
        client_id: client.clientId,
        client_secret: SECRET,
      }),
    );
  };
  return { parts, present, personGroups };
}

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(new TextDecoder().decode(jose.base64url.decode(token.split(".")[1])));
}

Deno.test("jwtBearerGrant() names the person as the sign-in provider's login does, groups from the claim, else from the last sign-in", async () => {
  const { parts, present, personGroups } = await setUp("groups");
  try {
    parts.namedGroups = new Set(["staff", "ops"]);
    const fromClaim = claimsOf((await present({ groups: ["staff", "other"] })).access_token);
    assert.equal(fromClaim.sub, "oidc:alice", "the subject a login of the same IdP gives");
    assert.deepEqual(fromClaim.groups, ["staff"], "only the groups the configuration names");
    // No groups claim: the groups the person's last browser sign-in named.
    assert.equal(claimsOf((await present()).access_token).groups, undefined);
    await personGroups.remember({ subject: "oidc:alice", groups: ["ops"] });
    assert.deepEqual(claimsOf((await present()).access_token).groups, ["ops"]);
  } finally {
    parts.close();
  }
});

Deno.test("jwtBearerGrant() applies the access policy and the servers' access as a code-flow grant does", async () => {
  const { parts, present } = await setUp();
  try {
    parts.refusal = "alice@example.com is not in the allowed domains";
    await assert.rejects(present(), (error: OAuthError) => {
      assert.equal(error.code, "invalid_grant");
      assert.equal(
        error.description,
        "the person may not use this gateway: alice@example.com is not in the allowed domains",
      );
      return true;
    });
    parts.refusal = undefined;
    parts.refusedServers.add(ALPHA);
    await assert.rejects(present(), (error: OAuthError) => {
      assert.equal(
        error.description,
        `the person may not use this service: alice@example.com may not use ${ALPHA}`,
      );
      return true;
    });
  } finally {
    parts.close();
  }
});

Deno.test("jwtBearerGrant() grants the requested scope within the assertion's, and no refresh token", async () => {
  const { parts, present } = await setUp();
  try {
    const tokens = await present({ scope: "mcp other" });
    assert.equal(tokens.scope, "mcp");
    assert.equal(tokens.refresh_token, undefined);
    await assert.rejects(present({ scope: "other" }), (error: OAuthError) => {
      assert.equal(error.code, "invalid_scope");
      return true;
    });
  } finally {
    parts.close();
  }
});
