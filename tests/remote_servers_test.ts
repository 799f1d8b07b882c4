/**
 * Remote MCP servers behind their own OAuth (`userToken.kind: mcp`), end to end with real
 * parts: the company IdP and the remote server's authorization server are npm:oidc-provider,
 * the remote server is the SDK checking JWT access tokens for its own audience. Gatehouse
 * registers itself dynamically, each person connects their own account, and calls carry that
 * person's upstream token and nothing of the client's.
 */
import assert from "node:assert/strict";
import { openTokensPage } from "./fixtures/credential_gateway.ts";
import { connectWithOAuth, MemoryOAuthProvider } from "./fixtures/oauth_client.ts";
import { connectTracker, type RemoteSetup, startRemoteGateway } from "./fixtures/remote_gateway.ts";
import { type Client, McpError } from "./fixtures/sdk.ts";
import { UserAgent } from "./fixtures/user_agent.ts";

interface Who {
  sub: string;
  aud: string | string[];
  scopes: string[];
  clientId: string;
}

async function whoami(client: Client): Promise<Who> {
  const result = await client.callTool({ name: "whoami", arguments: {} });
  assert.equal(result.isError, undefined, JSON.stringify(result));
  return result.structuredContent as unknown as Who;
}

async function signIn(setup: RemoteSetup, email: string): Promise<UserAgent> {
  const agent = new UserAgent();
  setup.idp.loginAs = { email, name: email };
  await openTokensPage(agent, setup.url);
  return agent;
}

Deno.test("kind: mcp: the first call asks to connect; after connecting (dynamic registration, PKCE, resource) calls carry the person's own upstream token", async () => {
  const setup = await startRemoteGateway();
  const clients: Client[] = [];
  try {
    const agent = await signIn(setup, "alice@example.com");
    const provider = new MemoryOAuthProvider();
    const refused = await connectWithOAuth(agent, `${setup.url}/tracker/mcp`, provider).then(
      () => assert.fail("expected initialize to be refused before connecting"),
      (error) => error as Error,
    );
    assert.ok(refused instanceof McpError, String(refused));
    assert.match(
      refused.message,
      new RegExp(
        `Tracker needs your own credential .*connect it at ${setup.url}/my/tokens\\?service=tracker`,
      ),
    );
    assert.equal(setup.as.registrations, 0);

    await connectTracker(setup, agent, "alice-at-tracker");
    assert.equal(setup.as.registrations, 1);
    assert.deepEqual(setup.as.resourcesAsked, [setup.remote.url]);

    const connected = await connectWithOAuth(agent, `${setup.url}/tracker/mcp`);
    const client = connected.client;
    clients.push(client);
    const who = await whoami(client);
    assert.equal(who.sub, "alice-at-tracker");
    assert.equal(who.aud, setup.remote.url);
    // No scopes configured: the ones the server's 401 named.
    assert.deepEqual(who.scopes, ["read"]);

    // The client's token never went upstream; the upstream token never reached the logs.
    const clientToken = connected.provider.savedTokens!.access_token;
    assert.ok(!setup.remote.authorizations.some((header) => header.includes(clientToken)));
    const upstream = setup.remote.authorizations.filter((header) => header.startsWith("Bearer "));
    assert.ok(upstream.length > 0);
    const logs = setup.gw.logs.join("\n");
    for (const header of new Set(upstream)) assert.ok(!logs.includes(header.slice(7)));

    // A second connection (another device) reuses the registration.
    const again = await connectWithOAuth(agent, `${setup.url}/tracker/mcp`);
    clients.push(again.client);
    assert.equal((await whoami(again.client)).sub, "alice-at-tracker");
    assert.equal(setup.as.registrations, 1);
  } finally {
    await Promise.all(clients.map((client) => client.close()));
    await setup.close();
  }
});
