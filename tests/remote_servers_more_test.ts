/**
 * Remote MCP servers (`kind: mcp`), continued: an aggregate with a member not yet connected, a
 * client registered by hand, a second gateway (another replica, or this one restarted) reusing
 * the dynamic registration, and what a hostile or broken server cannot make Gatehouse do.
 */
import assert from "node:assert/strict";
import { openPostgresStore, PostgresStore } from "../src/store/postgres.ts";
import { sharedPostgres } from "./fixtures/postgres.ts";
import { openKvStore } from "../src/store/kv.ts";
import { type CimdAs, startCimdAs } from "./fixtures/cimd_as.ts";
import { openTokensPage } from "./fixtures/credential_gateway.ts";
import { listenForGateway } from "./fixtures/gateway.ts";
import { connectWithOAuth } from "./fixtures/oauth_client.ts";
import {
  connectTracker,
  remoteConfig,
  type RemoteSetup,
  startRemoteGateway,
} from "./fixtures/remote_gateway.ts";
import {
  Client,
  StreamableHTTPClientTransport,
  ToolListChangedNotificationSchema,
} from "./fixtures/sdk.ts";
import { UserAgent } from "./fixtures/user_agent.ts";
import { connectV2Client } from "./fixtures/v2_client.ts";
import { within } from "./fixtures/waits.ts";

async function signIn(setup: { url: string; idp: RemoteSetup["idp"] }, email: string) {
  const agent = new UserAgent();
  setup.idp.loginAs = { email, name: email };
  await openTokensPage(agent, setup.url);
  return agent;
}

async function whoami(client: Client, name = "whoami") {
  const result = await client.callTool({ name, arguments: {} });
  assert.equal(result.isError, undefined, JSON.stringify(result));
  return result.structuredContent as { sub: string; clientId: string };
}

Deno.test("kind: mcp in an aggregate: without a connection the other members still work and a call to it asks to connect; once connected its tools join", async () => {
  const setup = await startRemoteGateway();
  let client: Client | undefined;
  try {
    const agent = await signIn(setup, "ivy@example.com");
    ({ client } = await connectWithOAuth(agent, `${setup.url}/work/mcp`));
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    assert.ok(names.includes("plain.echo"), names.join(", "));
    assert.ok(!names.some((name) => name.startsWith("tracker.")), names.join(", "));
    const failure = await client.callTool({ name: "tracker.whoami", arguments: {} }).then(
      () => assert.fail("expected the call to ask for a connection"),
      (error) => error as Error,
    );
    assert.match(
      failure.message,
      new RegExp(
        `Tracker needs your own credential .*connect it at ${setup.url}/my/tokens\\?service=tracker`,
      ),
    );

    const changed = Promise.withResolvers<void>();
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed.resolve());
    await connectTracker(setup, agent, "ivy-at-tracker");
    await within("notifications/tools/list_changed once Tracker is connected", changed.promise);
    assert.equal((await whoami(client, "tracker.whoami")).sub, "ivy-at-tracker");
    const echo = await client.callTool({ name: "plain.echo", arguments: { text: "still here" } });
    assert.equal(echo.isError, undefined);
    // A step-up through the aggregate names the page too.
    const stepUp = await client.callTool({ name: "tracker.admin_echo", arguments: { text: "x" } })
      .then(() => assert.fail("expected a step-up"), (error) => error as Error);
    assert.match(
      stepUp.message,
      new RegExp(
        `Tracker needs more access than your connection gives \\(read admin\\): connect again at ${setup.url}/my/tokens\\?service=tracker`,
      ),
    );
  } finally {
    await client?.close();
    await setup.close();
  }
});

Deno.test("kind: mcp with a client registered by hand: nothing is registered, and the server sees that client", async () => {
  const setup = await startRemoteGateway({
    userToken: `      clientId: gatehouse-by-hand
      clientSecret: \${TRACKER_SECRET}`,
    env: { TRACKER_SECRET: "tracker-secret-0123456789abcdef" },
    as: {
      client: {
        clientId: "gatehouse-by-hand",
        clientSecret: "tracker-secret-0123456789abcdef",
        redirectUri: "",
      },
    },
  });
  let client: Client | undefined;
  try {
    const agent = await signIn(setup, "jack@example.com");
    await connectTracker(setup, agent, "jack-at-tracker");
    ({ client } = await connectWithOAuth(agent, `${setup.url}/tracker/mcp`));
    const who = await whoami(client);
    assert.equal(who.sub, "jack-at-tracker");
    assert.equal(who.clientId, "gatehouse-by-hand");
    assert.equal(setup.as.registrations, 0);
    assert.ok(!setup.gw.logs.join("\n").includes("tracker-secret-0123456789abcdef"));
  } finally {
    await client?.close();
    await setup.close();
  }
});

for (const engine of ["kv :memory:", "postgres"] as const) {
  Deno.test(`kind: mcp: a second gateway on the same storage (${engine}; another replica, or a restart) uses the registration the first made, and each person's upstream tokens`, async () => {
    // PostgreSQL: a pool for each gateway, as two replicas have; KV in memory: one handle.
    const url = engine === "postgres" ? (await sharedPostgres()).url : undefined;
    const store = url
      ? await openPostgresStore(url, { sweep: false })
      : await openKvStore(":memory:");
    const other = url ? await openPostgresStore(url, { sweep: false }) : store;
    const setup = await startRemoteGateway({ gateway: { store } });
    const second = await listenForGateway();
    const clients: Client[] = [];
    try {
      const kate = await signIn(setup, "kate@example.com");
      await connectTracker(setup, kate, "kate-at-tracker");
      assert.equal(setup.as.registrations, 1);

      // The same configuration (the same baseUrl, as replicas behind one address have), new
      // process state.
      const replica = await second.start(
        remoteConfig(setup.url, setup.idp, setup.remote),
        { IDP_SECRET: setup.idp.clientSecret },
        { store: other },
      );
      try {
        const onReplica = { url: second.url, idp: setup.idp, as: setup.as };
        // Signed in at the shared address (the login's callback is the baseUrl's).
        const leo = await signIn(setup, "leo@example.com");
        leo.shareCookies(new URL(setup.url), new URL(second.url));
        // The connection starts on the replica; the person comes back to the shared address.
        await connectTracker(onReplica, leo, "leo-at-tracker");
        assert.equal(setup.as.registrations, 1);
        // MCP clients get their gateway token at the shared address and call the replica.
        const onSecond = async (agent: UserAgent) => {
          const { client, provider } = await connectWithOAuth(agent, `${setup.url}/tracker/mcp`);
          clients.push(client);
          const direct = new Client({ name: "replica-test", version: "1.0.0" });
          await direct.connect(
            new StreamableHTTPClientTransport(new URL(`${second.url}/tracker/mcp`), {
              requestInit: {
                headers: { authorization: `Bearer ${provider.savedTokens!.access_token}` },
              },
            }),
          );
          clients.push(direct);
          return direct;
        };
        assert.equal((await whoami(await onSecond(leo))).sub, "leo-at-tracker");
        // Kate's connection, made through the first gateway, works on the replica too.
        assert.equal((await whoami(await onSecond(kate))).sub, "kate-at-tracker");
      } finally {
        await Promise.all(clients.map((client) => client.close()));
        await replica.close();
      }
    } finally {
      await setup.close();
      if (store instanceof PostgresStore) await store.closed();
      else store.close();
      if (other instanceof PostgresStore) await other.closed();
    }
  });
}

Deno.test("kind: mcp: a hostile or broken server cannot send Gatehouse elsewhere: other hosts, redirects, another resource, a wrong issuer, oversized answers are refused and named", async () => {
  const setup = await startRemoteGateway();
  const hits: string[] = [];
  const ready = Promise.withResolvers<number>();
  // Stands for an internal service: reachable from the gateway, never configured.
  const internal = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: ({ port }) => ready.resolve(port) },
    (request) => {
      hits.push(request.url);
      return Response.json({ issuer: "x" });
    },
  );
  try {
    const internalUrl = `http://localhost:${await ready.promise}`;
    const remoteOrigin = new URL(setup.remote.url).origin;
    const prm = "/.well-known/oauth-protected-resource/mcp";
    const json = (body: unknown) => () => Response.json(body);
    const cases: { name: string; serve: Map<string, () => Response>; reason: RegExp }[] = [
      {
        name: "an authorization server on a host not configured",
        serve: new Map([[
          prm,
          json({ resource: setup.remote.url, authorization_servers: [internalUrl] }),
        ]]),
        reason:
          /localhost is neither the server's own host nor in its userToken.authorizationHosts/,
      },
      {
        name: "a redirect from the metadata",
        serve: new Map([[prm, () => Response.redirect(`${internalUrl}/prm`, 302)]]),
        reason: /answered with a redirect \(302\), which Gatehouse does not follow/,
      },
      {
        name: "metadata about another resource",
        serve: new Map([[
          prm,
          json({ resource: `${remoteOrigin}/other`, authorization_servers: [setup.as.issuer] }),
        ]]),
        reason: /the protected-resource metadata is for .*\/other, not for/,
      },
      {
        name: "authorization server metadata with another issuer",
        serve: new Map([
          [
            prm,
            json({ resource: setup.remote.url, authorization_servers: [`${remoteOrigin}/fake`] }),
          ],
          [
            "/.well-known/oauth-authorization-server/fake",
            json({
              issuer: setup.as.issuer,
              authorization_endpoint: `${setup.as.issuer}/auth`,
              token_endpoint: `${setup.as.issuer}/token`,
              code_challenge_methods_supported: ["S256"],
            }),
          ],
        ]),
        // (as the log line quotes it, in JSON)
        reason: /body \\"issuer\\" property does not match the expected value/,
      },
      {
        name: "an oversized answer",
        serve: new Map([[prm, () => new Response("x".repeat(70 * 1024))]]),
        reason: /answered with more than 65536 bytes/,
      },
    ];
    const agent = await signIn(setup, "mia@example.com");
    for (const { name, serve, reason } of cases) {
      setup.remote.metadata.clear();
      for (const [path, answer] of serve) setup.remote.metadata.set(path, answer);
      const logsBefore = setup.gw.logs.length;
      const response = await agent.request(`${setup.url}/oauth/connect?service=tracker`);
      const page = await response.text();
      assert.equal(response.status, 502, name);
      assert.match(page, /Tracker is unavailable/, name);
      const logged = setup.gw.logs.slice(logsBefore).join("\n");
      assert.match(logged, reason, `${name}: ${logged}`);
    }
    assert.deepEqual(hits, []);
    assert.equal(setup.as.registrations, 0);
  } finally {
    await internal.shutdown();
    await setup.close();
  }
});

Deno.test("kind: mcp with an authorization server that reads client ID metadata documents: Gatehouse's own document is the client, nothing is registered", async () => {
  let cimd: CimdAs | undefined;
  const setup = await startRemoteGateway({ startAs: async () => (cimd = await startCimdAs()) });
  let client: Client | undefined;
  try {
    const document = `${setup.url}/oauth/upstream-client`;
    const served = await fetch(document);
    assert.equal(served.headers.get("cache-control"), "public, max-age=300");
    assert.deepEqual(await served.json(), {
      client_id: document,
      client_name: "Gatehouse",
      client_uri: setup.url,
      redirect_uris: [`${setup.url}/oauth/callback/tracker`],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    });
    const agent = await signIn(setup, "nora@example.com");
    // A code sent back with another issuer's `iss` (a mix-up, RFC 9207) is not exchanged.
    cimd!.sendIss = "http://evil.example";
    const mixedUp = await agent.follow(`${setup.url}/oauth/connect?service=tracker`, () => false);
    assert.match(mixedUp.url.href, /notice=connect_failed/);
    assert.equal(cimd!.grants.authorization_code, undefined);
    assert.match(setup.gw.logs.join("\n"), /service connection failed.*iss/);
    cimd!.sendIss = undefined;
    await connectTracker(setup, agent, "nora-at-tracker");
    assert.deepEqual(cimd!.documentsFetched, [document, document]);
    ({ client } = await connectWithOAuth(agent, `${setup.url}/tracker/mcp`));
    const who = await whoami(client);
    assert.equal(who.sub, "nora-at-tracker");
    assert.equal(who.clientId, document);
  } finally {
    await client?.close();
    await setup.close();
  }
});

Deno.test("kind: mcp: a registration the server forgot is found out before the person is sent there, and made again", async () => {
  const setup = await startRemoteGateway();
  let client: Client | undefined;
  try {
    const agent = await signIn(setup, "otto@example.com");
    await connectTracker(setup, agent, "otto-at-tracker");
    assert.equal(setup.as.registrations, 1);
    // The server loses every registration (a reset, a cleanup of idle clients); the person's
    // browser would be stopped at its authorization endpoint with nowhere to go back to.
    await setup.as.forgetClients();
    setup.advance(11 * 60_000);
    await connectTracker(setup, agent, "otto-at-tracker");
    assert.equal(setup.as.registrations, 2);
    ({ client } = await connectWithOAuth(agent, `${setup.url}/tracker/mcp`));
    assert.equal((await whoami(client)).sub, "otto-at-tracker");
  } finally {
    await client?.close();
    await setup.close();
  }
});

Deno.test("kind: mcp in front of a remote server that speaks 2026-07-28: a 2025 session and a 2026 client both reach it as the person, and a refused token is refreshed", async () => {
  const setup = await startRemoteGateway({ revision: "2026-07-28" });
  const closing: (() => Promise<void>)[] = [];
  try {
    const agent = await signIn(setup, "pia@example.com");
    await connectTracker(setup, agent, "pia-at-tracker");
    const session = await connectWithOAuth(agent, `${setup.url}/tracker/mcp`);
    closing.push(() => session.client.close());
    assert.equal((await whoami(session.client)).sub, "pia-at-tracker");

    const v2 = await connectV2Client(`${setup.url}/tracker/mcp`, {
      negotiation: "pinned",
      token: session.provider.savedTokens!.access_token,
    });
    closing.push(() => v2.close());
    const modern = await v2.client.callTool({ name: "whoami", arguments: {} });
    assert.equal((modern.structuredContent as { sub: string }).sub, "pia-at-tracker");

    const token = setup.remote.authorizations.findLast((h) => h.startsWith("Bearer "))!;
    setup.remote.refused.add(token.slice(7));
    assert.equal((await whoami(session.client)).sub, "pia-at-tracker");
    assert.equal(setup.as.grants.refresh_token, 1);
  } finally {
    for (const close of closing.reverse()) await close();
    await setup.close();
  }
});

Deno.test("kind: mcp over legacy HTTP+SSE: discovered from the stream's 401, connected, and the stream opened with the person's token", async () => {
  const setup = await startRemoteGateway({ sse: true });
  let client: Client | undefined;
  try {
    const agent = await signIn(setup, "quinn@example.com");
    await connectTracker(setup, agent, "quinn-at-tracker");
    assert.deepEqual(setup.as.resourcesAsked, [setup.remote.url]);
    ({ client } = await connectWithOAuth(agent, `${setup.url}/tracker/mcp`));
    const result = await client.callTool({ name: "whoami", arguments: {} });
    assert.equal((result.structuredContent as { sub: string }).sub, "quinn-at-tracker");
  } finally {
    await client?.close();
    await setup.close();
  }
});

Deno.test("kind: mcp with the authorization server on another host: refused until that host is in authorizationHosts, then connected", async () => {
  const refused = await startRemoteGateway({ as: { host: "localhost" } });
  try {
    const agent = await signIn(refused, "rita@example.com");
    const response = await agent.request(`${refused.url}/oauth/connect?service=tracker`);
    await response.body?.cancel();
    assert.equal(response.status, 502);
    assert.match(
      refused.gw.logs.join("\n"),
      /authorization server http:\/\/localhost:\d+: localhost is neither the server's own host nor in its userToken.authorizationHosts/,
    );
    assert.equal(refused.as.registrations, 0);
  } finally {
    await refused.close();
  }
  const allowed = await startRemoteGateway({
    as: { host: "localhost" },
    userToken: "      authorizationHosts: [localhost]",
  });
  let client: Client | undefined;
  try {
    const agent = await signIn(allowed, "rita@example.com");
    await connectTracker(allowed, agent, "rita-at-tracker");
    ({ client } = await connectWithOAuth(agent, `${allowed.url}/tracker/mcp`));
    assert.equal((await whoami(client)).sub, "rita-at-tracker");
  } finally {
    await client?.close();
    await allowed.close();
  }
});
