/**
 * Per-person credentials over the protocol (a scripted browser; the pages themselves are
 * driven in Chromium by credentials_browser_test.ts): who gets which credential, what a
 * session without one is told, refresh, and aggregates.
 */
import assert from "node:assert/strict";
import {
  type CredentialSetup,
  csrfOf,
  openTokensPage,
  postForm,
  startCredentialGateway,
} from "./fixtures/credential_gateway.ts";
import { connectWithOAuth, MemoryOAuthProvider } from "./fixtures/oauth_client.ts";
import {
  auth,
  type Client,
  ElicitationCompleteNotificationSchema,
  McpError,
  ToolListChangedNotificationSchema,
} from "./fixtures/sdk.ts";
import { UserAgent } from "./fixtures/user_agent.ts";
import { within } from "./fixtures/waits.ts";

interface Echo {
  env: Record<string, string>;
  headers: Record<string, string>;
}

async function echo(client: Client, tool = "echo_environment"): Promise<Echo> {
  const result = await client.callTool({ name: tool, arguments: {} });
  return result.structuredContent as unknown as Echo;
}

/** Signs a person in (company login) and returns their browser. */
async function signIn(setup: CredentialSetup, email: string): Promise<UserAgent> {
  const agent = new UserAgent();
  setup.idp.loginAs = { email, name: email };
  await openTokensPage(agent, setup.url);
  return agent;
}

async function setNotionToken(setup: CredentialSetup, agent: UserAgent, token: string) {
  const page = await openTokensPage(agent, setup.url);
  const response = await postForm(agent, setup.url, "/my/tokens/set", {
    csrf: csrfOf(page),
    service: "notion",
    token,
    next: "tokens",
  });
  await response.body?.cancel();
  assert.equal(response.status, 303);
  assert.match(response.headers.get("location")!, /notice=saved/);
}

/** Connects the person's Linear account (played by the second provider); returns nothing. */
async function connectLinear(setup: CredentialSetup, agent: UserAgent, linearEmail: string) {
  setup.linear.loginAs = { email: linearEmail };
  const stop = await agent.follow(`${setup.url}/oauth/connect?service=linear`, () => false);
  assert.equal(stop.response.status, 200, stop.body.slice(0, 300));
  assert.match(stop.body, /Linear is connected\./);
}

/** Who the service says a token belongs to (its userinfo endpoint). */
async function linearAccountOf(setup: CredentialSetup, token: string): Promise<string> {
  const response = await fetch(`${setup.linear.issuer}/me`, {
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(
    response.status,
    200,
    `the service refused the token: ${await response.clone().text()}`,
  );
  return (await response.json()).sub;
}

Deno.test("two people in parallel on the same servers never see each other's credential", async () => {
  const setup = await startCredentialGateway();
  const clients: Client[] = [];
  try {
    const people = [
      {
        email: "alice@example.com",
        notion: "ntn_alice_0123456789abcdef",
        linear: "alice@linear.example",
      },
      {
        email: "bob@example.com",
        notion: "secret_bob_0123456789abcdef",
        linear: "bob@linear.example",
      },
    ];
    const agents: UserAgent[] = [];
    for (const person of people) {
      const agent = await signIn(setup, person.email);
      await setNotionToken(setup, agent, person.notion);
      await connectLinear(setup, agent, person.linear);
      agents.push(agent);
    }
    const sessions = await Promise.all(people.map(async (person, i) => {
      const notion = await Promise.all(
        [1, 2, 3].map(() => connectWithOAuth(agents[i], `${setup.url}/notion/mcp`)),
      );
      const linear = await Promise.all(
        [1, 2].map(() => connectWithOAuth(agents[i], `${setup.url}/linear/mcp`)),
      );
      clients.push(...notion.map((c) => c.client), ...linear.map((c) => c.client));
      return { person, notion, linear };
    }));
    await Promise.all(sessions.map(async ({ person, notion, linear }) => {
      for (let round = 0; round < 5; round++) {
        for (const { client } of notion) {
          assert.equal((await echo(client)).headers.authorization, `Bearer ${person.notion}`);
        }
      }
      const tokens = new Set<string>();
      for (const { client } of linear) {
        const { env } = await echo(client);
        tokens.add(env.SERVICE_TOKEN);
        // The child starts from an empty environment plus its configured env.
        assert.equal(env.IDP_SECRET, undefined);
      }
      assert.equal(tokens.size, 1);
      const [token] = tokens;
      const account = await linearAccountOf(setup, token);
      assert.equal(account, person.linear.replace(/[^a-z0-9]/gi, "-"));
    }));
    // Nothing of either credential in the gateway's logs.
    const logs = setup.gw.logs.join("\n");
    for (const person of people) assert.ok(!logs.includes(person.notion));
  } finally {
    await Promise.all(clients.map((client) => client.close()));
    await setup.close();
  }
});

Deno.test("a session without the person's credential is told where to add it; URL-elicitation clients get -32042, and 2026-07-28 clients input_required", async () => {
  const setup = await startCredentialGateway();
  try {
    const agent = await signIn(setup, "carol@example.com");
    // The services step is continued without adding the token.
    const provider = new MemoryOAuthProvider();
    const failure = await connectWithOAuth(agent, `${setup.url}/notion/mcp`, provider).then(
      () => assert.fail("expected initialize to be refused"),
      (error) => error as Error,
    );
    assert.ok(failure instanceof McpError, String(failure));
    assert.match(
      failure.message,
      new RegExp(
        `Notion needs your own credential .*add it at ${setup.url}/my/tokens\\?service=notion`,
      ),
    );

    const response = await fetch(`${setup.url}/notion/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${provider.savedTokens!.access_token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: { elicitation: { form: {}, url: {} } },
          clientInfo: { name: "raw", version: "1" },
        },
      }),
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("mcp-session-id"), null);
    const body = await response.json();
    assert.equal(body.id, 7);
    assert.equal(body.error.code, -32042);
    const [elicitation] = body.error.data.elicitations;
    assert.equal(elicitation.mode, "url");
    assert.equal(elicitation.url, `${setup.url}/my/tokens?service=notion`);
    assert.match(elicitation.elicitationId, /^[0-9a-f]{32}$/);

    // A 2026-07-28 client that opens URLs is asked to connect it as input_required; one that
    // cannot gets an error naming the page.
    const token = provider.savedTokens!.access_token;
    const modernCall = async (elicitationCapability: Record<string, unknown>) => {
      const answer = await fetch(`${setup.url}/notion/mcp`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "tools/call",
          "mcp-name": "echo_environment",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 8,
          method: "tools/call",
          params: {
            name: "echo_environment",
            arguments: {},
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientCapabilities": { elicitation: elicitationCapability },
            },
          },
        }),
      });
      assert.equal(answer.status, 200);
      return await answer.json();
    };
    const asked = await modernCall({ form: {}, url: {} });
    assert.equal(asked.result.resultType, "input_required", JSON.stringify(asked));
    assert.deepEqual(
      asked.result.inputRequests.connect.params.url,
      `${setup.url}/my/tokens?service=notion`,
    );
    assert.equal(asked.result.inputRequests.connect.params.mode, "url");
    const refused = await modernCall({ form: {} });
    assert.match(refused.error.message, /Notion needs your own credential/);
    assert.equal(refused.error.data.url, `${setup.url}/my/tokens?service=notion`);
  } finally {
    await setup.close();
  }
});

Deno.test("a service token close to expiry is refreshed once however many sessions ask; a refused refresh says reconnect", async () => {
  const setup = await startCredentialGateway();
  const clients: Client[] = [];
  try {
    const agent = await signIn(setup, "erin@example.com");
    await connectLinear(setup, agent, "erin@linear.example");
    const first = await connectWithOAuth(agent, `${setup.url}/linear/mcp`);
    clients.push(first.client);
    const original = (await echo(first.client)).env.SERVICE_TOKEN;
    assert.equal(setup.linear.grants.refresh_token ?? 0, 0);

    // 30 s of its 600 s left, by the gateway's clock: inside the refresh margin.
    setup.advance(570_000);
    const sessions = await Promise.all(
      [1, 2, 3, 4, 5].map(() => connectWithOAuth(agent, `${setup.url}/linear/mcp`)),
    );
    clients.push(...sessions.map((s) => s.client));
    const tokens = new Set(
      await Promise.all(sessions.map(async ({ client }) => (await echo(client)).env.SERVICE_TOKEN)),
    );
    assert.equal(tokens.size, 1);
    assert.notEqual([...tokens][0], original);
    assert.equal(setup.linear.grants.refresh_token, 1);
    assert.equal(await linearAccountOf(setup, [...tokens][0]), "erin-linear-example");

    // The person revoked Gatehouse at the service: the next refresh is refused.
    setup.linear.refuseRefresh = true;
    setup.advance(600_000);
    const refused = await connectWithOAuth(agent, `${setup.url}/linear/mcp`).then(
      () => assert.fail("expected the session to be refused"),
      (error) => error as Error,
    );
    assert.match(
      refused.message,
      new RegExp(
        `Linear connection has to be renewed .*reconnect at ${setup.url}/my/tokens\\?service=linear`,
      ),
    );
    const page = await openTokensPage(agent, setup.url);
    assert.match(page, /Needs reconnecting/);
  } finally {
    await Promise.all(clients.map((client) => client.close()));
    await setup.close();
  }
});

Deno.test("aggregate: a member without the person's credential is left out, says where to add it, and joins once added", async () => {
  const setup = await startCredentialGateway();
  let client: Client | undefined;
  try {
    const agent = await signIn(setup, "dave@example.com");
    ({ client } = await connectWithOAuth(agent, `${setup.url}/work/mcp`));
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    assert.ok(names.includes("plain.echo"), names.join(", "));
    assert.ok(!names.some((name) => name.startsWith("notion.") || name.startsWith("linear.")));

    const failure = await client.callTool({ name: "notion.echo_environment", arguments: {} })
      .then(() => assert.fail("expected an error"), (error) => error as Error);
    assert.match(failure.message, new RegExp(`add it at ${setup.url}/my/tokens\\?service=notion`));

    const changed = Promise.withResolvers<void>();
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed.resolve());
    await setNotionToken(setup, agent, "ntn_dave_0123456789abcdef");
    await within("notifications/tools/list_changed once the token is added", changed.promise);
    const after = (await client.listTools()).tools.map((tool) => tool.name);
    assert.ok(after.includes("notion.echo_environment"), after.join(", "));
    const { headers } = await echo(client, "notion.echo_environment");
    assert.equal(headers.authorization, "Bearer ntn_dave_0123456789abcdef");
  } finally {
    await client?.close();
    await setup.close();
  }
});

Deno.test("the services step and a service's callback belong to the browser session that started them", async () => {
  const setup = await startCredentialGateway();
  try {
    const alice = await signIn(setup, "alice@example.com");
    const bob = await signIn(setup, "bob@example.com");

    // Alice's client starts signing in to notion; she consents and reaches the services step.
    const provider = new MemoryOAuthProvider();
    assert.equal(await auth(provider, { serverUrl: `${setup.url}/notion/mcp` }), "REDIRECT");
    const consent = await alice.follow(provider.authorizationUrl!, () => false);
    const services = await alice.submitForm(
      consent.url,
      consent.body,
      { decision: "allow" },
      (url) => url.pathname === "/oauth/services",
    );
    const requestId = services.url.searchParams.get("request")!;
    assert.match(requestId, /^[A-Za-z0-9_-]{32}$/);

    // Bob cannot see or finish it, and trying does not spoil it for Alice.
    const peek = await bob.follow(`${setup.url}/oauth/services?request=${requestId}`, () => false);
    assert.equal(peek.response.status, 400);
    const steal = await bob.request(`${setup.url}/oauth/complete?request=${requestId}`);
    await steal.body?.cancel();
    assert.equal(steal.status, 400);
    const done = await alice.request(`${setup.url}/oauth/complete?request=${requestId}`);
    await done.body?.cancel();
    assert.equal(done.status, 302);
    assert.match(done.headers.get("location")!, /^http:\/\/127\.0\.0\.1:9\/callback\?code=/);

    // A service's callback opened in another person's browser stores nothing for anyone.
    setup.linear.loginAs = { email: "alice@linear.example" };
    const atCallback = await alice.follow(
      `${setup.url}/oauth/connect?service=linear`,
      (url) => url.pathname === "/oauth/callback/linear",
    );
    const hijack = await bob.follow(atCallback.url, () => false);
    assert.equal(hijack.response.status, 400);
    assert.match(hijack.body, /This connection was started elsewhere/);
    for (const agent of [alice, bob]) {
      const page = await openTokensPage(agent, setup.url);
      assert.match(page, /id="service-linear"[^]*Not connected/);
    }
  } finally {
    await setup.close();
  }
});

Deno.test("aggregate, URL-elicitation client: the missing member's call gets -32042, and the elicitation completes once the token is added", async () => {
  const setup = await startCredentialGateway();
  let client: Client | undefined;
  try {
    const agent = await signIn(setup, "frank@example.com");
    ({ client } = await connectWithOAuth(
      agent,
      `${setup.url}/work/mcp`,
      new MemoryOAuthProvider(),
      { elicitation: { form: {}, url: {} } },
    ));
    const failure = await client.callTool({ name: "notion.echo_environment", arguments: {} })
      .then(() => assert.fail("expected an error"), (error) => error as McpError);
    assert.equal(failure.code, -32042);
    const [elicitation] = (failure.data as { elicitations: Record<string, string>[] }).elicitations;
    assert.equal(elicitation.mode, "url");
    assert.equal(elicitation.url, `${setup.url}/my/tokens?service=notion`);

    const completed = Promise.withResolvers<string>();
    client.setNotificationHandler(
      ElicitationCompleteNotificationSchema,
      (notice) => completed.resolve(notice.params.elicitationId),
    );
    await setNotionToken(setup, agent, "ntn_frank_0123456789abcdef");
    assert.equal(
      await within("notifications/elicitation/complete", completed.promise),
      elicitation.elicitationId,
    );
    const { headers } = await echo(client, "notion.echo_environment");
    assert.equal(headers.authorization, "Bearer ntn_frank_0123456789abcdef");
  } finally {
    await client?.close();
    await setup.close();
  }
});

Deno.test("pasted tokens that are empty, too long, spaced or off-pattern are refused with a notice and nothing is stored", async () => {
  const setup = await startCredentialGateway();
  try {
    const agent = await signIn(setup, "grace@example.com");
    const csrf = csrfOf(await openTokensPage(agent, setup.url));
    const cases: [string, string][] = [
      ["   ", "empty"],
      [`ntn_${"x".repeat(9 * 1024)}`, "too_long"],
      ["ntn_with a space", "invalid_characters"],
      ["ntn_line\nbreak", "invalid_characters"],
      ["ghp_not_notion_0123456789", "pattern"],
    ];
    for (const [token, notice] of cases) {
      const response = await postForm(agent, setup.url, "/my/tokens/set", {
        csrf,
        service: "notion",
        token,
        next: "tokens",
      });
      await response.body?.cancel();
      assert.equal(response.status, 303);
      assert.match(response.headers.get("location")!, new RegExp(`notice=${notice}(&|$|#)`));
    }
    // A manual-token form for an OAuth service, or an unknown service, changes nothing either.
    for (const service of ["linear", "nope", "plain"]) {
      const response = await postForm(agent, setup.url, "/my/tokens/set", {
        csrf,
        service,
        token: "ntn_0123456789abcdef",
        next: "tokens",
      });
      assert.equal(response.status, 400);
      assert.match(await response.text(), /No such service/);
    }
    const page = await openTokensPage(agent, setup.url);
    assert.match(page, /id="service-notion"[^]*No token/);
  } finally {
    await setup.close();
  }
});
