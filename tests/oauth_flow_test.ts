/**
 * The whole authorization story with real parts: the SDK client's own OAuth flow against the
 * gateway, a real OpenID Connect provider as the company login, then tools/call; refresh with
 * rotation; one token per service; single sign-on across services.
 */
import assert from "node:assert/strict";
import { auth } from "./fixtures/sdk.ts";
import { connectWithOAuth, MemoryOAuthProvider } from "./fixtures/oauth_client.ts";
import { startOAuthGateway } from "./fixtures/oauth_gateway.ts";
import { jwtClaims } from "./fixtures/oauth_raw.ts";
import { UserAgent } from "./fixtures/user_agent.ts";
import { INIT, mcpHeaders, post } from "./fixtures/raw.ts";

Deno.test("SDK client: 401 → metadata → register → login → consent → token → tools/call, then refresh", async () => {
  const setup = await startOAuthGateway();
  const agent = new UserAgent();
  try {
    const endpoint = `${setup.url}/alpha/mcp`;
    const { client, provider, callback } = await connectWithOAuth(agent, endpoint);
    assert.equal(callback.searchParams.get("iss"), setup.url, "RFC 9207 iss on the redirect");
    assert.equal(setup.idp.logins, 1);
    const result = await client.callTool({ name: "echo", arguments: { hello: "world" } });
    assert.deepEqual(result.content, [{ type: "text", text: '{"hello":"world"}' }]);
    await client.close();

    const first = provider.savedTokens!;
    assert.equal(first.token_type, "Bearer");
    assert.equal(first.scope, "mcp");
    assert.ok(first.refresh_token);
    const claims = jwtClaims(first.access_token);
    assert.deepEqual(claims.aud, [`${setup.url}/alpha`]);
    assert.equal(claims.email, "alice@example.com");
    assert.equal(claims.iss, setup.url);

    // Refresh through the SDK: a new access token and a rotated refresh token.
    assert.equal(await auth(provider, { serverUrl: endpoint }), "AUTHORIZED");
    const second = provider.savedTokens!;
    assert.notEqual(second.access_token, first.access_token);
    assert.notEqual(second.refresh_token, first.refresh_token);

    // The refreshed token opens alpha and nothing else.
    const alpha = await post(
      endpoint,
      INIT,
      mcpHeaders({ authorization: `Bearer ${second.access_token}` }),
    );
    assert.equal(alpha.status, 200);
    const beta = await post(
      `${setup.url}/beta/mcp`,
      INIT,
      mcpHeaders({ authorization: `Bearer ${second.access_token}` }),
    );
    assert.equal(beta.status, 401);
    assert.match(beta.headers.get("www-authenticate")!, /error="invalid_token"/);
    assert.match(
      beta.headers.get("www-authenticate")!,
      new RegExp(`resource_metadata="${setup.url}/.well-known/oauth-protected-resource/beta"`),
    );
  } finally {
    await setup.close();
  }
});

Deno.test("single sign-on: a second service needs consent but no second company login", async () => {
  const setup = await startOAuthGateway();
  const agent = new UserAgent();
  try {
    const a = await connectWithOAuth(agent, `${setup.url}/alpha/mcp`);
    await a.client.close();
    const b = await connectWithOAuth(agent, `${setup.url}/beta/mcp`, new MemoryOAuthProvider());
    await b.client.close();
    assert.equal(setup.idp.logins, 1, "the SSO session spared the second login");
    assert.ok(agent.visited.filter((u) => u.includes("/authorize?")).length >= 2);
  } finally {
    await setup.close();
  }
});

Deno.test("a static serviceAuths token and OAuth tokens both open a server that has both", async () => {
  const setup = await startOAuthGateway();
  try {
    const ok = await post(
      `${setup.url}/shared/mcp`,
      INIT,
      mcpHeaders({ authorization: "Bearer static-shared-token-0123456789" }),
    );
    assert.equal(ok.status, 200);
    const agent = new UserAgent();
    const { client } = await connectWithOAuth(agent, `${setup.url}/shared/mcp`);
    const result = await client.callTool({ name: "pid", arguments: {} });
    assert.equal((result.content as { type: string }[])[0].type, "text");
    await client.close();
  } finally {
    await setup.close();
  }
});

Deno.test("an aggregate is a service of its own: its token opens it, not its members, and back", async () => {
  const setup = await startOAuthGateway();
  const agent = new UserAgent();
  try {
    const { client, provider } = await connectWithOAuth(agent, `${setup.url}/combo/mcp`);
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), [
      "alpha.echo",
      "alpha.pid",
      "beta.echo",
      "beta.pid",
    ]);
    const result = await client.callTool({ name: "beta.echo", arguments: { via: "combo" } });
    assert.deepEqual(result.content, [{ type: "text", text: '{"via":"combo"}' }]);
    await client.close();
    const comboToken = provider.savedTokens!.access_token;
    const atMember = await post(
      `${setup.url}/alpha/mcp`,
      INIT,
      mcpHeaders({ authorization: `Bearer ${comboToken}` }),
    );
    assert.equal(atMember.status, 401);

    const alpha = await connectWithOAuth(
      agent,
      `${setup.url}/alpha/mcp`,
      new MemoryOAuthProvider(),
    );
    await alpha.client.close();
    const alphaToken = alpha.provider.savedTokens!.access_token;
    const atCombo = await post(
      `${setup.url}/combo/mcp`,
      INIT,
      mcpHeaders({ authorization: `Bearer ${alphaToken}` }),
    );
    assert.equal(atCombo.status, 401);
    assert.match(atCombo.headers.get("www-authenticate")!, /not valid for .*\/combo/);
  } finally {
    await setup.close();
  }
});
