import assert from "node:assert/strict";
import { Secret } from "../core/secret.ts";
import { createOidcProvider, DISCOVERY_TTL_MS } from "./oidc.ts";
import type { IdpConfig } from "../config/types.ts";
import { testClock } from "../../tests/fixtures/clock.ts";

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
    const idp = createOidcProvider(config(await server.issuer), clock);
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
    await createOidcProvider(config(issuer), clock).authorizationUrl(START);
    await createOidcProvider(config(issuer), clock).authorizationUrl(START);
    assert.equal(server.hits, 2, "a new provider (a reload, say) discovers afresh");
  } finally {
    await server.close();
  }
});
