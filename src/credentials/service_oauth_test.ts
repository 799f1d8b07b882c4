import assert from "node:assert/strict";
import type { OAuthUserToken } from "../config/types.ts";
import { Secret } from "../core/secret.ts";
import {
  createServiceOAuthClient,
  DISCOVERY_TTL_MS,
  SERVICE_TIMEOUT_MS,
  ServiceOAuthError,
} from "./service_oauth.ts";
import { testClock } from "../../tests/fixtures/clock.ts";

/**
 * A service's OAuth server on 127.0.0.1: RFC 8414 metadata and a token endpoint whose answer
 * the test chooses (or holds, to be answered later). Counts the metadata requests.
 */
function serviceServer(token: () => Response | Promise<Response>) {
  let metadataHits = 0;
  const ready = Promise.withResolvers<string>();
  const server = Deno.serve(
    {
      hostname: "127.0.0.1",
      port: 0,
      onListen: ({ port }) => ready.resolve(`http://127.0.0.1:${port}`),
    },
    async (request) => {
      const origin = await ready.promise;
      const path = new URL(request.url).pathname;
      await request.body?.cancel();
      if (path === "/.well-known/oauth-authorization-server") {
        metadataHits++;
        return Response.json({
          issuer: origin,
          authorization_endpoint: `${origin}/authorize`,
          token_endpoint: `${origin}/token`,
        });
      }
      if (path === "/token") return await token();
      return new Response("not found", { status: 404 });
    },
  );
  return {
    origin: ready.promise,
    get metadataHits() {
      return metadataHits;
    },
    close: () => server.shutdown(),
  };
}

function userToken(origin: string, discovered = false): OAuthUserToken {
  return {
    kind: "oauth",
    displayName: "Service",
    ...(discovered
      ? { issuer: origin }
      : { authorizationUrl: `${origin}/authorize`, tokenUrl: `${origin}/token` }),
    clientId: "gatehouse",
    clientSecret: new Secret("client-secret"),
    scopes: [],
  };
}

const tokenAnswer = (fields: Record<string, unknown>) => () =>
  Response.json({ access_token: "at-2", token_type: "Bearer", ...fields });

Deno.test("refresh() sets expiresAt from expires_in on its clock's time", async () => {
  const server = serviceServer(tokenAnswer({ expires_in: 3600, refresh_token: "rt-2" }));
  const clock = testClock();
  clock.freeze();
  // The gateway's time, not the machine's: a day ahead here.
  clock.advance(86_400_000);
  try {
    const client = createServiceOAuthClient(userToken(await server.origin), clock);
    const tokens = await client.refresh("rt-1");
    assert.deepEqual(tokens, {
      accessToken: "at-2",
      refreshToken: "rt-2",
      expiresAt: clock.now() + 3_600_000,
      scope: undefined,
    });
  } finally {
    await server.close();
  }
});

Deno.test("refresh() leaves expiresAt unset when the service gives no expires_in", async () => {
  const server = serviceServer(tokenAnswer({}));
  const clock = testClock();
  clock.freeze();
  try {
    const client = createServiceOAuthClient(userToken(await server.origin), clock);
    assert.equal((await client.refresh("rt-1")).expiresAt, undefined);
  } finally {
    await server.close();
  }
});

Deno.test("refresh() gives up as unreachable when the service has not answered in SERVICE_TIMEOUT_MS on its clock", async () => {
  const held = Promise.withResolvers<Response>();
  const asked = Promise.withResolvers<void>();
  const server = serviceServer(() => (asked.resolve(), held.promise));
  const clock = testClock();
  clock.freeze();
  try {
    const client = createServiceOAuthClient(userToken(await server.origin), clock);
    const refreshing = client.refresh("rt-1");
    await asked.promise;
    clock.advance(SERVICE_TIMEOUT_MS);
    // The service answers just after: too late, as the clock's time was up first.
    held.resolve(tokenAnswer({ expires_in: 3600 })());
    await assert.rejects(refreshing, (error: Error) => {
      assert.ok(error instanceof ServiceOAuthError);
      assert.equal(error.code, "unreachable");
      assert.match(error.message, /^the refresh failed: the service did not answer/);
      return true;
    });
  } finally {
    held.resolve(new Response("never asked", { status: 500 }));
    await server.close();
  }
});

Deno.test("createServiceOAuthClient() reuses discovered metadata until DISCOVERY_TTL_MS has passed on its clock", async () => {
  const server = serviceServer(tokenAnswer({}));
  const clock = testClock();
  clock.freeze();
  try {
    const client = createServiceOAuthClient(userToken(await server.origin, true), clock);
    const start = { state: "s", codeChallenge: "c", redirectUri: "http://127.0.0.1/cb" };
    await client.authorizationUrl(start);
    await client.refresh("rt-1");
    assert.equal(server.metadataHits, 1);
    clock.advance(DISCOVERY_TTL_MS - 1);
    await client.authorizationUrl(start);
    assert.equal(server.metadataHits, 1, "still fresh just before the TTL");
    clock.advance(1);
    await client.authorizationUrl(start);
    assert.equal(server.metadataHits, 2, "read again once the TTL has passed");
  } finally {
    await server.close();
  }
});
