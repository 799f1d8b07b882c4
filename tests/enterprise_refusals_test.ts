/**
 * Every refusal of the jwt-bearer grant with its exact error and description, key rotation at
 * the IdP (a new kid is picked up, a withdrawn key refused), and the bound on JWKS fetches a
 * flood of unknown kids can cause. The assertions are signed with the test IdP's own keys
 * (tests/fixtures/idp_id_jag.ts), each made wrong in one way.
 */
import assert from "node:assert/strict";
import * as jose from "jose";
import { IdJagKeys } from "./fixtures/idp_id_jag.ts";
import { type OAuthSetup, startOAuthGateway } from "./fixtures/oauth_gateway.ts";
import {
  claimsFor,
  GW_CLIENT,
  GW_SECRET,
  JWT_BEARER,
  present,
  startJwtBearerGateway,
} from "./fixtures/jwt_bearer_gateway.ts";
import { jwtClaims } from "./fixtures/oauth_raw.ts";
import { waitUntil } from "./fixtures/waits.ts";
import { type TestClock, testClock } from "./fixtures/clock.ts";

async function start(): Promise<{ setup: OAuthSetup; keys: IdJagKeys; clock: TestClock }> {
  const clock = testClock();
  return { ...(await startJwtBearerGateway(clock)), clock };
}

function unsigned(header: Record<string, unknown>, claims: jose.JWTPayload): string {
  const part = (value: unknown) => jose.base64url.encode(JSON.stringify(value));
  return `${part(header)}.${part(claims)}.`;
}

Deno.test("ID-JAG refusals: each failed check is a 400 invalid_grant naming it, without the assertion", async () => {
  const { setup, keys } = await start();
  try {
    const url = setup.url;
    const issuer = setup.idp.issuer;
    // The metadata offers the grant and its profile, and names no trusted issuer.
    const metadata = await (await fetch(`${url}/.well-known/oauth-authorization-server`)).json();
    assert.deepEqual(metadata.grant_types_supported, [
      "authorization_code",
      "refresh_token",
      JWT_BEARER,
    ]);
    assert.deepEqual(metadata.authorization_grant_profiles_supported, [
      "urn:ietf:params:oauth:grant-profile:id-jag",
    ]);
    assert.deepEqual(metadata.token_endpoint_auth_methods_supported, [
      "none",
      "client_secret_post",
      "client_secret_basic",
      "private_key_jwt",
    ]);
    assert.ok(!JSON.stringify(metadata).includes(issuer), "no trusted issuer published");
    const stranger = await IdJagKeys.create();
    const hmac = new TextEncoder().encode("a-shared-secret-anyone-could-know-0123456789");
    const cases: [string, () => Promise<string>, string][] = [
      [
        "not a JWT",
        () => Promise.resolve("abc.def"),
        "the assertion is not a JWT: it is not a compact JWS (three base64url parts)",
      ],
      [
        "typ JWT",
        () => keys.sign(claimsFor(setup), { typ: "JWT" }),
        "the assertion's header typ must be oauth-id-jag+jwt",
      ],
      [
        "alg none",
        () => Promise.resolve(unsigned({ alg: "none", typ: "oauth-id-jag+jwt" }, claimsFor(setup))),
        "the assertion's alg must be one of RS256, PS256, ES256, EdDSA",
      ],
      [
        "alg HS256",
        () =>
          new jose.SignJWT(claimsFor(setup)).setProtectedHeader({
            alg: "HS256",
            typ: "oauth-id-jag+jwt",
          }).sign(hmac),
        "the assertion's alg must be one of RS256, PS256, ES256, EdDSA",
      ],
      [
        "untrusted iss",
        () => keys.sign(claimsFor(setup, { iss: "https://evil.example" })),
        "the assertion's issuer (iss) is not a trusted ID-JAG issuer",
      ],
      [
        "another key, the IdP's kid",
        () => stranger.sign(claimsFor(setup), { kid: keys.current.kid }),
        "the assertion's signature does not verify with the issuer's key",
      ],
      [
        "unknown kid",
        () => stranger.sign(claimsFor(setup)),
        `the assertion's signature cannot be checked: issuer ${issuer} publishes no current RS256 key with kid ${stranger.current.kid} (withdrawn, or never its key)`,
      ],
      [
        "aud another",
        () => keys.sign(claimsFor(setup, { aud: "https://other.example" })),
        `the assertion's audience (aud) must be exactly ${url}`,
      ],
      [
        "aud two",
        () => keys.sign(claimsFor(setup, { aud: [url, "https://other.example"] })),
        `the assertion's audience (aud) must be exactly ${url}`,
      ],
      [
        "client_id another",
        () => keys.sign(claimsFor(setup, { client_id: "someone-else" })),
        "the assertion's client_id is not the authenticated client",
      ],
      [
        "no sub",
        () => keys.sign(claimsFor(setup, { sub: undefined })),
        "the assertion has no subject (sub)",
      ],
      [
        "expired",
        () =>
          keys.sign(
            claimsFor(setup, {
              iat: Math.floor(Date.now() / 1000) - 400,
              exp: Math.floor(Date.now() / 1000) - 100,
            }),
          ),
        "the assertion has expired",
      ],
      [
        "iat ahead",
        () => keys.sign(claimsFor(setup, { iat: Math.floor(Date.now() / 1000) + 120 })),
        "the assertion is issued in the future",
      ],
      [
        "too long",
        () => keys.sign(claimsFor(setup, { exp: Math.floor(Date.now() / 1000) + 1200 })),
        "the assertion lives 1200 s, longer than the 600 s allowed (oauth.idJag.maxLifetime)",
      ],
      [
        "no jti",
        () => keys.sign(claimsFor(setup, { jti: undefined })),
        "the assertion has no identifier (jti)",
      ],
      [
        "resource elsewhere",
        () => keys.sign(claimsFor(setup, { resource: "https://other.example/alpha" })),
        "the assertion's resource names no service of this gateway",
      ],
      [
        "no resource anywhere",
        () => keys.sign(claimsFor(setup, { resource: undefined })),
        "no service named: the assertion carries no resource and the request sends none",
      ],
    ];
    for (const [name, make, description] of cases) {
      const assertion = await make();
      const { status, body } = await present(setup, assertion);
      assert.equal(status, 400, name);
      assert.deepEqual(body, { error: "invalid_grant", error_description: description }, name);
    }
    // The request cannot point the IdP's choice elsewhere.
    const pointed = await present(setup, await keys.sign(claimsFor(setup)), {
      resource: `${url}/beta`,
    });
    assert.deepEqual(pointed.body, {
      error: "invalid_grant",
      error_description: "the requested resource is not the assertion's resource",
    });
    const scoped = await present(setup, await keys.sign(claimsFor(setup)), { scope: "admin" });
    assert.deepEqual(scoped, {
      status: 400,
      body: {
        error: "invalid_scope",
        error_description: "none of the requested scopes is in the assertion's scope",
      },
    });
    // Replay: the second presentation of one assertion is refused.
    const once = await keys.sign(claimsFor(setup));
    assert.equal((await present(setup, once)).status, 200);
    assert.deepEqual(await present(setup, once), {
      status: 400,
      body: {
        error: "invalid_grant",
        error_description:
          "the assertion was already used (its jti was seen before); ask the identity provider for a new one",
      },
    });
    // Request and client errors.
    assert.deepEqual(await present(setup, undefined), {
      status: 400,
      body: { error: "invalid_request", error_description: "assertion is required" },
    });
    const wrongSecret = await present(
      setup,
      await keys.sign(claimsFor(setup)),
      {},
      `Basic ${btoa(`${GW_CLIENT}:not-the-secret`)}`,
    );
    assert.deepEqual(wrongSecret, {
      status: 401,
      body: { error: "invalid_client", error_description: "the client secret is wrong" },
    });
    const registered = await fetch(`${url}/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        redirect_uris: ["http://127.0.0.1:9/cb"],
        token_endpoint_auth_method: "none",
      }),
    }).then((r) => r.json());
    const publicClient = await present(setup, await keys.sign(claimsFor(setup)), {
      client_id: registered.client_id,
    }, "");
    assert.deepEqual(publicClient, {
      status: 400,
      body: {
        error: "unauthorized_client",
        error_description:
          "a public client cannot use the jwt-bearer grant; register a confidential client (client_secret_basic or client_secret_post)",
      },
    });
    // No assertion reached a log line, and each refusal has its audit line.
    const logs = setup.gw.logs.join("\n");
    assert.ok(!logs.includes(once.split(".")[1]), "no assertion in the logs");
    const audits = setup.gw.logs.map((line) => JSON.parse(line)).filter((l) =>
      l.event === "id_jag"
    );
    assert.equal(audits.filter((a) => a.outcome === "refused").length, cases.length + 3);
    assert.ok(audits.some((a) => a.check === "jti" && typeof a.jti === "string"));
  } finally {
    await setup.close();
  }
});

Deno.test("ID-JAG keys: a new kid at the IdP is picked up, a withdrawn key is refused, unknown kids cost one fetch per 30 s", async () => {
  const { setup, keys, clock } = await start();
  try {
    const first = keys.current;
    const ok = await present(setup, await keys.sign(claimsFor(setup)));
    assert.equal(ok.status, 200);
    assert.deepEqual(jwtClaims(ok.body.access_token as string).aud, [`${setup.url}/alpha`]);
    assert.equal(ok.body.refresh_token, undefined);
    const fetchedBefore = keys.served;
    // Rotation: the IdP signs with a new key. Within 30 s of the last fetch the gateway does not
    // ask again (the bound a flood of made-up kids meets too); after that, one fetch and the new
    // kid is accepted. The gateway's clock moves on instead of the test waiting.
    await keys.rotate();
    const early = await present(setup, await keys.sign(claimsFor(setup)));
    assert.equal(early.status, 400, "no second fetch within 30 s");
    assert.equal(keys.served, fetchedBefore);
    clock.advance(31_000);
    assert.equal((await present(setup, await keys.sign(claimsFor(setup)))).status, 200);
    assert.equal(keys.served, fetchedBefore + 1, "the new kid fetched the keys once");
    // The IdP withdraws the first key. The set fetched at the rotation still lists it, so it is
    // accepted until the next fetch, which the next new kid brings.
    keys.withdraw(first.kid);
    const stale = await present(setup, await keys.sign(claimsFor(setup), {}, first));
    assert.equal(stale.status, 200, "a key still in the fetched set is accepted until refetched");
    clock.advance(31_000);
    await keys.rotate();
    assert.equal((await present(setup, await keys.sign(claimsFor(setup)))).status, 200);
    const withdrawn = await present(setup, await keys.sign(claimsFor(setup), {}, first));
    assert.deepEqual(withdrawn.body, {
      error: "invalid_grant",
      error_description:
        `the assertion's signature cannot be checked: issuer ${setup.idp.issuer} publishes no current RS256 key with kid ${first.kid} (withdrawn, or never its key)`,
    });
    // A flood of unknown kids within 30 s: at most one more fetch.
    const before = keys.served;
    const stranger = await IdJagKeys.create();
    for (let i = 0; i < 20; i++) {
      await stranger.rotate();
      const { status } = await present(setup, await stranger.sign(claimsFor(setup)));
      assert.equal(status, 400);
    }
    assert.ok(keys.served - before <= 1, `${keys.served - before} fetches for 20 unknown kids`);
  } finally {
    await setup.close();
  }
});

Deno.test("ID-JAG start-up: an issuer whose discovery names no jwks_uri is warned of, and its ID-JAGs refused", async () => {
  // An IdP whose discovery lacks jwks_uri: oidc-provider always publishes one, so this one
  // answers its discovery alone, as such an IdP would.
  const ready = Promise.withResolvers<number>();
  const bare = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: ({ port }) => ready.resolve(port) },
    (request) => {
      const issuer = new URL(request.url).origin;
      return Response.json({ issuer, token_endpoint: `${issuer}/token` });
    },
  );
  const issuer = `http://127.0.0.1:${await ready.promise}`;
  const keys = await IdJagKeys.create();
  const setup = await startOAuthGateway(
    `  idJag: { issuers: ["${issuer}"] }
  clients:
    - id: ${GW_CLIENT}
      secret: ${GW_SECRET}`,
  );
  try {
    await waitUntil(
      "the start-up warning about the issuer without jwks_uri",
      () => setup.gw.logs.some((line) => line.includes("names no jwks_uri")),
    );
    const warning = JSON.parse(setup.gw.logs.find((line) => line.includes("names no jwks_uri"))!);
    assert.equal(warning.level, "warn");
    assert.equal(warning.issuer, issuer);
    const { status, body } = await present(
      setup,
      await keys.sign(claimsFor(setup, { iss: issuer })),
    );
    assert.equal(status, 400);
    assert.equal(
      body.error_description,
      `the assertion's signature cannot be checked: the keys of issuer ${issuer} could not be fetched (the discovery document of ${issuer} has no jwks_uri); try again later`,
    );
  } finally {
    await setup.close();
    await bare.shutdown();
  }
});

Deno.test("ID-JAG without oauth.idJag: the metadata offers no jwt-bearer grant, and /token says why it refuses one", async () => {
  const setup = await startOAuthGateway();
  try {
    const metadata = await (await fetch(`${setup.url}/.well-known/oauth-authorization-server`))
      .json();
    assert.deepEqual(metadata.grant_types_supported, ["authorization_code", "refresh_token"]);
    assert.equal(metadata.authorization_grant_profiles_supported, undefined);
    assert.deepEqual(await present(setup, "a.b.c"), {
      status: 400,
      body: {
        error: "unsupported_grant_type",
        error_description: "this gateway takes no ID-JAGs (oauth.idJag is not configured)",
      },
    });
  } finally {
    await setup.close();
  }
});
