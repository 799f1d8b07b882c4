/**
 * Durability: after `kill -9` and a restart on the same storage, registered clients, refresh
 * tokens, access tokens, the browser's SSO session and people's credentials are all still there,
 * and clients carry on where they were.
 */
import assert from "node:assert/strict";
import { csrfOf, openTokensPage, postForm } from "./fixtures/credential_gateway.ts";
import { startHttpFixture } from "./fixtures/fixture_server.ts";
import { startGatewayProcess } from "./fixtures/gateway_process.ts";
import { startIdp } from "./fixtures/idp.ts";
import { connectWithOAuth, MemoryOAuthProvider } from "./fixtures/oauth_client.ts";
import { token } from "./fixtures/oauth_raw.ts";
import { startRelay } from "./fixtures/ports.ts";
import { INIT, mcpHeaders, post } from "./fixtures/raw.ts";
import { Client, StreamableHTTPClientTransport } from "./fixtures/sdk.ts";
import { UserAgent } from "./fixtures/user_agent.ts";

Deno.test("kill -9 and restart: clients, tokens, SSO session and credentials survive", async () => {
  // One address before and after the restart (cookies, baseUrl, audiences), whatever port the
  // restarted process gets.
  const relay = startRelay();
  const idp = await startIdp([`${relay.url}/oauth/callback`]);
  const backend = await startHttpFixture();
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-durability-" });
  const yaml = `listen: 127.0.0.1:{{PORT}}
baseUrl: ${relay.url}
storage: ${dir}/gatehouse.kv
secret: durability-test-secret-0123456789-abcdefgh
servers:
  notion:
    transport: streamable-http
    url: ${backend.url}
    headers: { Authorization: "Bearer {{user.token}}" }
    requiresUserToken: true
    userToken: { kind: manual, displayName: Notion }
oauth:
  idp: { provider: oidc, issuer: "${idp.issuer}", clientId: ${idp.clientId}, clientSecret: "${idp.clientSecret}" }
  allow: { domains: [example.com] }
`;
  let gw = await startGatewayProcess(yaml);
  relay.forwardTo(gw.port);
  const url = relay.url;
  try {
    const agent = new UserAgent();
    const page = await openTokensPage(agent, url);
    await (await postForm(agent, url, "/my/tokens/set", {
      csrf: csrfOf(page),
      service: "notion",
      token: "ntn_durable_0123456789abcdef",
      next: "tokens",
    })).body?.cancel();
    const provider = new MemoryOAuthProvider();
    const { client } = await connectWithOAuth(agent, `${url}/notion/mcp`, provider);
    await client.close();
    const tokens = provider.savedTokens!;
    const clientId = provider.clientInfo!.client_id;
    const loginsBefore = idp.logins;

    gw.signal("SIGKILL");
    assert.equal((await gw.exited).signal, "SIGKILL");
    await gw.close();
    gw = await startGatewayProcess(yaml);
    relay.forwardTo(gw.port);

    // The registration and the access token issued before the crash.
    const lookup = await fetch(`${url}/clients/${clientId}`);
    assert.equal(lookup.status, 200);
    await lookup.body?.cancel();
    const session = await post(
      `${url}/notion/mcp`,
      INIT,
      mcpHeaders({ authorization: `Bearer ${tokens.access_token}` }),
    );
    assert.equal(session.status, 200, session.text);

    // The browser's SSO session: no second login at the identity provider.
    const again = await openTokensPage(agent, url);
    assert.equal(idp.logins, loginsBefore);
    assert.match(again, /Token set/);

    // The refresh token rotates, and the person's credential still reaches the backend.
    const refreshed = await token(url, {
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token!,
      client_id: clientId,
    });
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.json));
    provider.saveTokens({ ...tokens, ...refreshed.json });
    // The client resumes with its refreshed tokens, no new sign-in.
    const resumed = new Client({ name: "resumed", version: "1" });
    await resumed.connect(
      new StreamableHTTPClientTransport(new URL(`${url}/notion/mcp`), {
        authProvider: provider,
      }),
    );
    const echoed = await resumed.callTool({ name: "echo_environment", arguments: {} });
    const headers = (echoed.structuredContent as { headers: Record<string, string> }).headers;
    assert.equal(headers.authorization, "Bearer ntn_durable_0123456789abcdef");
    await resumed.close();
  } finally {
    await gw.close();
    await relay.close();
    await backend.close();
    await idp.close();
    await Deno.remove(dir, { recursive: true });
  }
});
