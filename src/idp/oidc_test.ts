import assert from "node:assert/strict";
import { Secret } from "../core/secret.ts";
import { createOidcProvider, DISCOVERY_TTL_MS } from "./oidc.ts";
import type { IdpConfig } from "../config/types.ts";
import { s256Challenge } from "../crypto/pkce.ts";
import { randomBase64Url } from "../crypto/random.ts";
import { testClock } from "../../tests/fixtures/clock.ts";
import { startIdp, type TestAccount, type TestIdp } from "../../tests/fixtures/idp.ts";
import { UserAgent } from "../../tests/fixtures/user_agent.ts";
import type { Identity } from "../core/identity.ts";

/** Warnings are kept here, to be asserted on. */
function recordingLog() {
  const warnings: { message: string; fields?: Record<string, unknown> }[] = [];
  return {
    warnings,
    warn: (message: string, fields?: Record<string, unknown>) => warnings.push({ message, fields }),
  };
}

/** An issuer on 127.0.0.1 that serves only its discovery document, counting the requests. */
function discoveryServer() {
  let hits = 0;
  const ready = Promise.withResolvers<string>();
  const server = Deno.serve(
    {
      hostname: "127.0.0.1",
      port: 0,
      onListen: ({ port }) => ready.resolve(`http://127.0.0.1:${port}`),
    },
    async (request) => {
      const issuer = await ready.promise;
      if (new URL(request.url).pathname !== "/.well-known/openid-configuration") {
        return new Response("not found", { status: 404 });
      }
      hits++;
      return Response.json({
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
      });
    },
  );
  return {
    issuer: ready.promise,
    get hits() {
      return hits;
    },
    close: () => server.shutdown(),
  };
}

function config(issuer: string): IdpConfig {
  return {
    provider: "oidc",
    issuer,
    clientId: "gatehouse",
    clientSecret: new Secret("client-secret"),
    scopes: ["openid", "email"],
    githubUrl: "https://github.com",
    githubApiUrl: "https://api.github.com",
  };
}

const START = {
  state: "s",
  nonce: "n",
  codeChallenge: "c",
  redirectUri: "http://127.0.0.1/callback",
};

Deno.test("createOidcProvider() reuses its discovery until DISCOVERY_TTL_MS has passed on its clock", async () => {
  const server = discoveryServer();
  const clock = testClock();
  clock.freeze();
  try {
    const idp = createOidcProvider(config(await server.issuer), clock, recordingLog());
    const url = await idp.authorizationUrl(START);
    assert.equal(url.origin + url.pathname, `${await server.issuer}/authorize`);
    await idp.authorizationUrl(START);
    assert.equal(server.hits, 1, "discovered once");
    clock.advance(DISCOVERY_TTL_MS - 1);
    await idp.authorizationUrl(START);
    assert.equal(server.hits, 1, "still fresh just before the TTL");
    clock.advance(1);
    await idp.authorizationUrl(START);
    assert.equal(server.hits, 2, "discovered again once the TTL has passed");
    await idp.authorizationUrl(START);
    assert.equal(server.hits, 2, "and reused again");
  } finally {
    await server.close();
  }
});

Deno.test("createOidcProvider() keeps discovery per provider, not shared between instances", async () => {
  const server = discoveryServer();
  const clock = testClock();
  clock.freeze();
  try {
    const issuer = await server.issuer;
    await createOidcProvider(config(issuer), clock, recordingLog()).authorizationUrl(START);
    await createOidcProvider(config(issuer), clock, recordingLog()).authorizationUrl(START);
    assert.equal(server.hits, 2, "a new provider (a reload, say) discovers afresh");
  } finally {
    await server.close();
  }
});

/** Never requested: the test's browser stops at the redirect to it. */
const CALLBACK = "http://127.0.0.1:9/oidc-callback";

/** `account` signs in at the real provider, through `createOidcProvider` with `groupsClaim`. */
async function signIn(
  idp: TestIdp,
  groupsClaim: string | undefined,
  account: TestAccount,
): Promise<{ identity: Identity; warnings: ReturnType<typeof recordingLog>["warnings"] }> {
  const log = recordingLog();
  idp.loginAs = account;
  const provider = createOidcProvider(
    {
      ...config(idp.issuer),
      clientId: idp.clientId,
      clientSecret: new Secret(idp.clientSecret),
      groupsClaim,
    },
    testClock(),
    log,
  );
  const [state, nonce, codeVerifier] = [1, 2, 3].map(() => randomBase64Url(32));
  const url = await provider.authorizationUrl({
    state,
    nonce,
    codeChallenge: await s256Challenge(codeVerifier),
    redirectUri: CALLBACK,
  });
  const stop = await new UserAgent().follow(url, (u) => u.href.startsWith(CALLBACK));
  assert.ok(stop.url.href.startsWith(CALLBACK), `the provider stopped at ${stop.url}`);
  const { identity } = await provider.completeLogin({
    callbackUrl: stop.url,
    state,
    nonce,
    codeVerifier,
    redirectUri: CALLBACK,
  });
  return { identity, warnings: log.warnings };
}

async function withIdp(test: (idp: TestIdp) => Promise<void>): Promise<void> {
  const idp = await startIdp([CALLBACK]);
  try {
    await test(idp);
  } finally {
    await idp.close();
  }
}

const ALICE = { email: "alice@example.com" };

Deno.test("createOidcProvider() reads groupsClaim from the ID token, keeping names as given", async () => {
  await withIdp(async (idp) => {
    const account = {
      ...ALICE,
      claims: { groups: ["Editors", "ops", "ops"] },
      claimsIn: "id_token",
    } as const;
    const signedIn = await signIn(idp, "groups", account);
    assert.deepEqual(signedIn.identity.groups, ["Editors", "ops"]);
    assert.deepEqual(signedIn.warnings, []);
    const without = await signIn(idp, undefined, account);
    assert.equal(without.identity.groups, undefined, "no groupsClaim: no groups at all");
  });
});

Deno.test("createOidcProvider() reads groupsClaim from userinfo when the ID token lacks it", async () => {
  await withIdp(async (idp) => {
    const { identity, warnings } = await signIn(idp, "roles", {
      ...ALICE,
      claims: { roles: ["admin", "reader"] },
      claimsIn: "userinfo",
    });
    assert.deepEqual(identity.groups, ["admin", "reader"]);
    assert.deepEqual(warnings, []);
  });
});

Deno.test("createOidcProvider() takes one string as one group and ignores any other shape with a warning", async () => {
  await withIdp(async (idp) => {
    const single = await signIn(idp, "groups", { ...ALICE, claims: { groups: "solo" } });
    assert.deepEqual(single.identity.groups, ["solo"]);
    const odd = await signIn(idp, "groups", { ...ALICE, claims: { groups: { solo: true } } });
    assert.deepEqual(odd.identity.groups, []);
    assert.deepEqual(odd.warnings.map((w) => [w.message, w.fields?.claim, w.fields?.type]), [[
      "the groups claim is neither a list of strings nor a string; sign-in proceeds without groups",
      "groups",
      "object",
    ]]);
    const mixed = await signIn(idp, "groups", { ...ALICE, claims: { groups: ["a", 7, "b"] } });
    assert.deepEqual(mixed.identity.groups, ["a", "b"]);
    assert.equal(mixed.warnings[0].fields?.ignored, 1);
  });
});

Deno.test("createOidcProvider() signs in without groups and says what to do when Entra sends a group overage", async () => {
  await withIdp(async (idp) => {
    for (
      const claims of [
        {
          _claim_names: { groups: "src1" },
          _claim_sources: {
            src1: { endpoint: "https://graph.microsoft.com/v1.0/users/x/getMemberObjects" },
          },
        },
        { hasgroups: true },
      ]
    ) {
      const { identity, warnings } = await signIn(idp, "groups", {
        ...ALICE,
        claims,
        claimsIn: "id_token",
      });
      assert.equal(identity.email, "alice@example.com");
      assert.deepEqual(identity.groups, []);
      assert.equal(warnings.length, 1, JSON.stringify(warnings));
      assert.equal(
        warnings[0].message,
        "the identity provider sent a group overage instead of the groups; sign-in proceeds without groups",
      );
      assert.match(String(warnings[0].fields?.hint), /Groups assigned to the application/);
      assert.match(String(warnings[0].fields?.hint), /groupsClaim: roles/);
    }
  });
});
