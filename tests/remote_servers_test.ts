/**
 * Remote MCP servers behind their own OAuth (`userToken.kind: mcp`), end to end with real
 * parts: the company IdP and the remote server's authorization server are npm:oidc-provider,
 * the remote server is the SDK checking JWT access tokens for its own audience. Gatehouse
 * registers itself dynamically, each person connects their own account, and calls carry that
 * person's upstream token and nothing of the client's.
 */
import assert from "node:assert/strict";
import { csrfOf, openTokensPage, postForm } from "./fixtures/credential_gateway.ts";
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

/** The upstream token the remote server saw last. */
function lastUpstreamToken(setup: RemoteSetup): string {
  const header = setup.remote.authorizations.findLast((h) => h.startsWith("Bearer "));
  assert.ok(header, "the remote server saw no token");
  return header.slice(7);
}

async function callFails(client: Client, name: string): Promise<Error> {
  return await client.callTool({ name, arguments: { text: "hi" } }).then(
    (result) => assert.fail(`expected ${name} to fail: ${JSON.stringify(result)}`),
    (error) => error as Error,
  );
}

Deno.test("kind: mcp: tokens are refreshed before expiry and when the server refuses one (rotation kept); a registration the server forgot means connecting again, with a new registration", async () => {
  const setup = await startRemoteGateway({ as: { accessTokenTtl: 600 } });
  const clients: Client[] = [];
  try {
    const agent = await signIn(setup, "erin@example.com");
    await connectTracker(setup, agent, "erin-at-tracker");
    const { client } = await connectWithOAuth(agent, `${setup.url}/tracker/mcp`);
    clients.push(client);
    assert.equal((await whoami(client)).sub, "erin-at-tracker");
    const first = lastUpstreamToken(setup);

    // 30 s of 600 left on the gateway's clock: refreshed before it is sent. (A new session:
    // moving the clock this far idles out the first.)
    setup.advance(570_000);
    const { client: later } = await connectWithOAuth(agent, `${setup.url}/tracker/mcp`);
    clients.push(later);
    assert.equal((await whoami(later)).sub, "erin-at-tracker");
    const second = lastUpstreamToken(setup);
    assert.notEqual(second, first);
    assert.equal(setup.as.grants.refresh_token, 1);

    // The server stops accepting the current token: refreshed (with the rotated refresh
    // token) and the call sent again, once.
    setup.remote.refused.add(second);
    assert.equal((await whoami(later)).sub, "erin-at-tracker");
    const third = lastUpstreamToken(setup);
    assert.notEqual(third, second);
    assert.equal(setup.as.grants.refresh_token, 2);

    // The authorization server lost Gatehouse's registration: the refresh is refused with
    // invalid_client, and the person is told to connect again.
    setup.remote.refused.add(third);
    await setup.as.forgetClients();
    const failure = await callFails(later, "whoami");
    assert.match(
      failure.message,
      new RegExp(
        `Tracker connection has to be renewed .*reconnect at ${setup.url}/my/tokens\\?service=tracker`,
      ),
    );
    assert.match(await openTokensPage(agent, setup.url), /Needs reconnecting/);
    await connectTracker(setup, agent, "erin-at-tracker");
    assert.equal(setup.as.registrations, 2);
    assert.equal((await whoami(later)).sub, "erin-at-tracker");
  } finally {
    await Promise.all(clients.map((client) => client.close()));
    await setup.close();
  }
});

Deno.test("kind: mcp: a 403 insufficient_scope asks the person to connect again with the wider scope, and the call then works", async () => {
  const setup = await startRemoteGateway();
  const clients: Client[] = [];
  try {
    const agent = await signIn(setup, "frank@example.com");
    await connectTracker(setup, agent, "frank-at-tracker");
    const { client } = await connectWithOAuth(agent, `${setup.url}/tracker/mcp`);
    clients.push(client);
    const failure = await callFails(client, "admin_echo");
    assert.match(
      failure.message,
      new RegExp(
        `Tracker needs more access than your connection gives \\(read admin\\): connect again at ${setup.url}/my/tokens\\?service=tracker`,
      ),
    );
    // Still connected for what it already allowed.
    assert.equal((await whoami(client)).sub, "frank-at-tracker");
    await connectTracker(setup, agent, "frank-at-tracker");
    const result = await client.callTool({ name: "admin_echo", arguments: { text: "hi" } });
    assert.deepEqual(result.content, [{ type: "text", text: "hi" }]);
    assert.deepEqual((await whoami(client)).scopes.sort(), ["admin", "read"]);
  } finally {
    await Promise.all(clients.map((client) => client.close()));
    await setup.close();
  }
});

Deno.test("kind: mcp: two people in parallel each reach the server as themselves, never with the other's token; disconnecting revokes at the server", async () => {
  const setup = await startRemoteGateway();
  const clients: Client[] = [];
  try {
    const people = ["gina", "hugo"];
    const agents = new Map<string, UserAgent>();
    for (const person of people) {
      const agent = await signIn(setup, `${person}@example.com`);
      await connectTracker(setup, agent, `${person}-at-tracker`);
      agents.set(person, agent);
    }
    const sessions = await Promise.all(people.map(async (person) => {
      const { client } = await connectWithOAuth(agents.get(person)!, `${setup.url}/tracker/mcp`);
      clients.push(client);
      return { person, client };
    }));
    const seen = new Map<string, Set<string>>();
    await Promise.all(sessions.map(async ({ person, client }) => {
      for (let round = 0; round < 5; round++) {
        assert.equal((await whoami(client)).sub, `${person}-at-tracker`);
      }
    }));
    // Each upstream token belongs to exactly one person.
    for (const header of setup.remote.authorizations.filter((h) => h.startsWith("Bearer "))) {
      const sub =
        JSON.parse(atob(header.slice(7).split(".")[1].replace(/-/g, "+").replace(/_/g, "/"))).sub;
      if (!seen.has(header)) seen.set(header, new Set());
      seen.get(header)!.add(sub);
    }
    assert.equal(seen.size, 2);
    for (const subs of seen.values()) assert.equal(subs.size, 1);

    // Gina disconnects: revoked at the server, forgotten here; Hugo is untouched.
    const gina = agents.get("gina")!;
    const page = await openTokensPage(gina, setup.url);
    const response = await postForm(gina, setup.url, "/oauth/disconnect", {
      csrf: csrfOf(page),
      service: "tracker",
      next: "tokens",
    });
    await response.body?.cancel();
    assert.equal(response.status, 303);
    assert.match(response.headers.get("location")!, /notice=disconnected#/);
    assert.ok(setup.as.revocations >= 1);
    const failure = await callFails(sessions[0].client, "whoami");
    assert.match(failure.message, /Tracker needs your own credential .*connect it at/);
    assert.equal((await whoami(sessions[1].client)).sub, "hugo-at-tracker");
  } finally {
    await Promise.all(clients.map((client) => client.close()));
    await setup.close();
  }
});
