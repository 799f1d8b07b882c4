import assert from "node:assert/strict";
import { testClock } from "../../tests/fixtures/clock.ts";
import { startHostileUpstream } from "../../tests/fixtures/hostile_upstream.ts";
import type { McpUserToken } from "../config/types.ts";
import { Secret } from "../core/secret.ts";
import { deriveAesKey } from "../crypto/keys.ts";
import { createLogger } from "../observability/logger.ts";
import { openKvStore } from "../store/kv.ts";
import { UpstreamIdentities } from "./mcp_identity.ts";
import { createMcpUpstreamClient } from "./mcp_upstream.ts";
import { DISCOVERY_TTL_MS, ServiceOAuthError } from "./service_oauth.ts";

const CONFIG: McpUserToken = {
  kind: "mcp",
  displayName: "Tracker",
  scopes: [],
  authorizationHosts: [],
};
const CALLBACK = "https://gw.example.com/oauth/callback/tracker";

async function upstreamClient(url: string) {
  const store = await openKvStore(":memory:");
  const clock = testClock();
  const identities = new UpstreamIdentities({
    store,
    keys: [
      await deriveAesKey(
        new Secret("vault-secret-0123456789-abcdefghijklmnop"),
        "vault-encryption",
      ),
    ],
    clock,
    logger: createLogger("error", () => {}),
    clientName: "Gatehouse",
  });
  const client = createMcpUpstreamClient({
    url,
    config: CONFIG,
    redirectUri: CALLBACK,
    identities,
    clock,
  });
  return { client, clock, close: () => store.close() };
}

Deno.test("createMcpUpstreamClient() sends a code, a refresh token or a revocation only to the authorization server the connection was made with, never to one the server names since", async () => {
  const server = await startHostileUpstream();
  // Another authorization server on the server's own host (so discovery may follow it).
  const other = await startHostileUpstream();
  const { client, clock, close } = await upstreamClient(server.url);
  try {
    const start = await client.authorizationUrl({
      state: "state-1",
      codeChallenge: "challenge",
      redirectUri: CALLBACK,
    });
    assert.equal(start.issuer, server.origin);
    assert.equal(start.scope, "read");
    assert.equal(start.url.origin, server.origin);
    const callback = new URL(`${CALLBACK}?code=code-1&state=state-1`);
    const tokens = await client.exchange({
      callbackUrl: callback,
      state: "state-1",
      codeVerifier: "v".repeat(43),
      redirectUri: CALLBACK,
      issuer: start.issuer,
    });
    assert.equal(tokens.issuer, server.origin);
    assert.ok(tokens.refreshToken);

    // The server now names the other authorization server; its metadata is read again.
    server.prm.authorization_servers = [other.origin];
    clock.advance(DISCOVERY_TTL_MS + 1);
    const refused = (error: unknown) =>
      error instanceof ServiceOAuthError && error.code === "refused" &&
      error.message.includes(`made with the authorization server ${server.origin}`) &&
      /connect again/.test(error.message);
    await assert.rejects(client.refresh(tokens.refreshToken!, tokens.issuer), refused);
    await assert.rejects(
      client.revoke(tokens.refreshToken!, "refresh_token", tokens.issuer),
      refused,
    );
    await assert.rejects(
      client.exchange({
        callbackUrl: new URL(`${CALLBACK}?code=code-2&state=state-2`),
        state: "state-2",
        codeVerifier: "v".repeat(43),
        redirectUri: CALLBACK,
        issuer: start.issuer,
      }),
      refused,
    );
    // Nothing reached the other server's token or revocation endpoint.
    assert.deepEqual(
      other.seen.filter((request) => request.path === "/token" || request.path === "/revoke"),
      [],
    );
    assert.ok(!other.seen.some((request) => request.body.includes(tokens.refreshToken!)));
  } finally {
    close();
    await other.close();
    await server.close();
  }
});
