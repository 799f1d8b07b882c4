/**
 * Remote MCP servers (`kind: mcp`) that misbehave on purpose (tests/fixtures/hostile_upstream.ts):
 * what a hostile or broken server and authorization server cannot make Gatehouse do with a
 * person's grant, and how each failure reaches the person.
 */
import assert from "node:assert/strict";
import { testClock } from "./fixtures/clock.ts";
import { csrfOf, openTokensPage, postForm } from "./fixtures/credential_gateway.ts";
import { listenForGateway } from "./fixtures/gateway.ts";
import { type HostileUpstream, startHostileUpstream } from "./fixtures/hostile_upstream.ts";
import { startIdp } from "./fixtures/idp.ts";
import { connectWithOAuth } from "./fixtures/oauth_client.ts";
import { remoteConfig } from "./fixtures/remote_gateway.ts";
import type { Client } from "./fixtures/sdk.ts";
import { UserAgent } from "./fixtures/user_agent.ts";

async function startHostileGateway(userToken = "") {
  const socket = await listenForGateway();
  const idp = await startIdp([`${socket.url}/oauth/callback`]);
  const up = await startHostileUpstream();
  const clock = testClock();
  const gw = await socket.start(
    remoteConfig(socket.url, idp, { url: up.url } as never, userToken),
    { IDP_SECRET: idp.clientSecret },
    { clock },
  );
  const agent = new UserAgent();
  idp.loginAs = { email: "hal@example.com", name: "Hal" };
  await openTokensPage(agent, socket.url);
  return {
    gw,
    up,
    agent,
    url: socket.url,
    clock,
    close: async () => {
      await gw.close();
      await up.close();
      await idp.close();
    },
  };
}
type Setup = Awaited<ReturnType<typeof startHostileGateway>>;

/** Connects the person's Tracker account; returns where the connection ended. */
async function connect(setup: Setup): Promise<URL> {
  const stop = await setup.agent.follow(`${setup.url}/oauth/connect?service=tracker`, () => false);
  assert.equal(stop.response.status, 200, stop.body.slice(0, 300));
  return stop.url;
}

/** A call's outcome as text: its error's message, or the result. */
async function call(client: Client, name = "whoami"): Promise<string> {
  return await client.callTool({ name, arguments: {} }).then(
    (result) => JSON.stringify(result),
    (error) => (error as Error).message,
  );
}

function grants(up: HostileUpstream, type: string): URLSearchParams[] {
  return up.seen.filter((request) => request.path === "/token")
    .map((request) => new URLSearchParams(request.body))
    .filter((grant) =>
      grant.get("grant_type") === type && !grant.get("code")?.startsWith("gatehouse-probe-")
    );
}

Deno.test("kind: mcp: a server that refuses every token, fresh ones too, costs one refresh; then the person is asked to connect again instead of a refresh on every call", async () => {
  const setup = await startHostileGateway();
  let client: Client | undefined;
  try {
    await connect(setup);
    ({ client } = await connectWithOAuth(setup.agent, `${setup.url}/tracker/mcp`));
    assert.match(await call(client), /"text":"ok"/);
    setup.up.accepted.clear();
    setup.up.token = () => {
      const answer = setup.up.issue();
      setup.up.accepted.clear();
      return answer;
    };
    for (let i = 0; i < 3; i++) {
      assert.match(
        await call(client),
        new RegExp(
          `your Tracker connection has to be renewed \\(the server refused even a freshly refreshed token\\): reconnect at ${setup.url}/my/tokens\\?service=tracker`,
        ),
      );
    }
    assert.equal(grants(setup.up, "refresh_token").length, 1);
  } finally {
    await client?.close();
    await setup.close();
  }
});

Deno.test("kind: mcp: a step-up asks for the scopes granted and the new ones, also when the authorization server's answers name none; a 403 asking for prose or thousands of characters is no step-up", async () => {
  const setup = await startHostileGateway("      scopes: [read, write]");
  let client: Client | undefined;
  try {
    // Token answers without `scope`: what was asked for was granted (RFC 6749 §5.1).
    setup.up.token = () => setup.up.issue({ scope: undefined });
    await connect(setup);
    const asked = () =>
      setup.up.seen.filter((r) => r.path === "/authorize").map((r) => r.query.get("scope"));
    assert.deepEqual(asked(), ["read write"]);
    ({ client } = await connectWithOAuth(setup.agent, `${setup.url}/tracker/mcp`));
    let challenge = "";
    setup.up.mcp = (_request, body) =>
      (body as { method?: string })?.method === "tools/call"
        ? new Response(null, { status: 403, headers: { "www-authenticate": challenge } })
        : undefined;
    for (
      const hostile of [
        `Bearer error="insufficient_scope", scope="read \\"then\\" visit https://evil.example"`,
        `Bearer error="insufficient_scope", scope="read ${"x".repeat(300)}"`,
        `Bearer error="insufficient_scope", scope="${
          Array.from({ length: 40 }, (_, i) => `s${i}`).join(" ")
        }"`,
      ]
    ) {
      challenge = hostile;
      const outcome = await call(client);
      assert.doesNotMatch(outcome, /needs more access|evil\.example/, hostile);
    }
    assert.equal(
      setup.gw.logs.filter((line) =>
        line.includes("the server asked for scopes Gatehouse does not ask for")
      ).length,
      3,
    );

    challenge = 'Bearer error="insufficient_scope", scope="admin"';
    assert.match(
      await call(client),
      /Tracker needs more access than your connection gives \(read write admin\): connect again at/,
    );
    await connect(setup);
    assert.deepEqual(asked(), ["read write", "read write admin"]);
  } finally {
    await client?.close();
    await setup.close();
  }
});

Deno.test("kind: mcp: a server that names another authorization server after people connected gets none of their grants there: no refresh token, no revocation; the person connects again", async () => {
  const setup = await startHostileGateway();
  // Another authorization server on the server's own host, so discovery may follow it.
  const other = await startHostileUpstream();
  let client: Client | undefined;
  try {
    await connect(setup);
    setup.up.prm.authorization_servers = [other.origin];
    // An hour later: the metadata is read again, and the access token has expired.
    setup.clock.advance(61 * 60_000);
    const refused = await connectWithOAuth(setup.agent, `${setup.url}/tracker/mcp`).then(
      () => "connected",
      (error) => (error as Error).message,
    );
    assert.match(
      refused,
      /your Tracker connection has to be renewed \(the service refused to refresh it\): reconnect at/,
    );
    assert.match(
      setup.gw.logs.join("\n"),
      new RegExp(
        `made with the authorization server ${setup.up.origin}, but the server now names ${other.origin}`,
      ),
    );
    const page = await setup.agent.request(`${setup.url}/my/tokens`).then((r) => r.text());
    const disconnected = await postForm(setup.agent, setup.url, "/oauth/disconnect", {
      csrf: csrfOf(page),
      service: "tracker",
    });
    await disconnected.body?.cancel();
    assert.deepEqual(
      other.seen.filter((r) => r.path === "/token" || r.path === "/revoke"),
      [],
    );
    // No refresh token the first server issued (rt-…) went to the other.
    assert.ok(!other.seen.some((r) => /rt-\d+-/.test(r.body)));
  } finally {
    await client?.close();
    await other.close();
    await setup.close();
  }
});

Deno.test("kind: mcp: an access token no Authorization header can carry is refused at the connection, and an absurd expires_in does not make every call refresh", async () => {
  const setup = await startHostileGateway();
  let client: Client | undefined;
  try {
    setup.up.token = () => setup.up.issue({ access_token: "abc\r\nX-Injected: 1" });
    assert.match((await connect(setup)).href, /notice=connect_failed/);
    assert.match(
      setup.gw.logs.join("\n"),
      /issued an access token with characters other than visible ASCII/,
    );

    setup.up.token = () => setup.up.issue({ expires_in: 1e306 });
    assert.match((await connect(setup)).href, /notice=connected/);
    ({ client } = await connectWithOAuth(setup.agent, `${setup.url}/tracker/mcp`));
    for (let i = 0; i < 3; i++) {
      setup.clock.advance(10_000);
      assert.match(await call(client), /"text":"ok"/);
    }
    assert.equal(grants(setup.up, "refresh_token").length, 0);
  } finally {
    await client?.close();
    await setup.close();
  }
});
