/**
 * Secrets never reach the logs: a full run (sign-in, consent, the services step, a connected
 * service account, a pasted token, MCP calls, refresh, disconnect, sign-out) with every
 * secret known, then every log line searched for each of them.
 */
import assert from "node:assert/strict";
import {
  csrfOf,
  openTokensPage,
  postForm,
  startCredentialGateway,
} from "./fixtures/credential_gateway.ts";
import { fixtureStdio, listenForGateway, startGateway } from "./fixtures/gateway.ts";
import { startIdp } from "./fixtures/idp.ts";
import { connectWithOAuth } from "./fixtures/oauth_client.ts";
import { idpSection, TEST_MASTER_SECRET } from "./fixtures/oauth_gateway.ts";
import { token } from "./fixtures/oauth_raw.ts";
import { INIT, post } from "./fixtures/raw.ts";
import { UserAgent } from "./fixtures/user_agent.ts";
import { waitUntil } from "./fixtures/waits.ts";

Deno.test("a full flow logs no secret: master secret, client secrets, codes, tokens, cookies, credentials", async () => {
  const setup = await startCredentialGateway();
  const secrets = new Map<string, string>([
    ["master secret", TEST_MASTER_SECRET],
    ["IdP client secret", setup.idp.clientSecret],
    ["service client secret", setup.linear.clientSecret],
  ]);
  try {
    const agent = new UserAgent();
    setup.idp.loginAs = { email: "alice@example.com" };
    const page = await openTokensPage(agent, setup.url);
    const notion = "ntn_secret_pasted_token_0123456789";
    secrets.set("pasted token", notion);
    await (await postForm(agent, setup.url, "/my/tokens/set", {
      csrf: csrfOf(page),
      service: "notion",
      token: notion,
      next: "tokens",
    })).body?.cancel();
    setup.linear.loginAs = { email: "alice@linear.example" };
    await agent.follow(`${setup.url}/oauth/connect?service=linear`, () => false);

    const { client, provider, callback } = await connectWithOAuth(agent, `${setup.url}/work/mcp`);
    secrets.set("authorization code", callback.searchParams.get("code")!);
    secrets.set("access token", provider.savedTokens!.access_token);
    secrets.set("refresh token", provider.savedTokens!.refresh_token!);
    const echoed = await client.callTool({ name: "linear.echo_environment", arguments: {} });
    const env = (echoed.structuredContent as { env: Record<string, string> }).env;
    secrets.set("service access token", env.SERVICE_TOKEN);
    await client.callTool({ name: "notion.echo_environment", arguments: {} });
    await client.close();

    // A rotation at /token, a refused replay, and the person disconnecting and signing out.
    const refreshed = await token(setup.url, {
      grant_type: "refresh_token",
      refresh_token: provider.savedTokens!.refresh_token!,
      client_id: provider.clientInfo!.client_id,
    });
    assert.equal(refreshed.status, 200);
    secrets.set("rotated refresh token", refreshed.json.refresh_token);
    await token(setup.url, {
      grant_type: "refresh_token",
      refresh_token: provider.savedTokens!.refresh_token!,
      client_id: provider.clientInfo!.client_id,
    });
    const tokensPage = await openTokensPage(agent, setup.url);
    await (await postForm(agent, setup.url, "/oauth/disconnect", {
      csrf: csrfOf(tokensPage),
      service: "linear",
      next: "tokens",
    })).body?.cancel();
    for (const [name, value] of agent.cookies(new URL(setup.url))) {
      secrets.set(`cookie ${name}`, value);
    }
    await (await postForm(agent, setup.url, "/logout", { csrf: csrfOf(tokensPage) })).body
      ?.cancel();

    // The audit trail names the person and the client behind each call.
    const audits = setup.gw.logs.map((line) => JSON.parse(line)).filter((l) => l.msg === "audit");
    const linearCall = audits.find((l) => l.target === "linear.echo_environment");
    assert.equal(linearCall?.email, "alice@example.com");
    assert.equal(linearCall?.client, provider.clientInfo!.client_id);
    assert.equal(linearCall?.server, "work");
    assert.equal(linearCall?.outcome, "ok");

    const logs = setup.gw.logs.join("\n");
    const events = new Set(setup.gw.logs.map((line) => JSON.parse(line).msg));
    for (
      const event of [
        "login",
        "token set",
        "service connected",
        "client registered",
        "session opened",
        "token refused",
        "service disconnected",
        "logout",
      ]
    ) assert.ok(events.has(event), `the flow logged "${event}": ${[...events].join(", ")}`);
    for (const [name, value] of secrets) {
      assert.ok(value && value.length >= 16, `${name} is known`);
      assert.ok(!logs.includes(value), `the logs carry the ${name}`);
    }
  } finally {
    await setup.close();
  }
});

Deno.test("a stdio backend that prints its person's token and its configured secrets: the logs show *** instead", async () => {
  const socket = await listenForGateway();
  const idp = await startIdp([`${socket.url}/oauth/callback`]);
  const personToken = "lk_4f7c9e2a1b0d8e3f6a5b";
  const apiKey = "api-key-9b8c7d6e5f4a3b2c";
  const gw = await socket.start(
    `
baseUrl: ${socket.url}
secret: ${TEST_MASTER_SECRET}
servers:
  leaky:
    transport: stdio
    ${
      fixtureStdio({
        SERVICE_TOKEN: "{{user.token}}",
        API_KEY: "${LEAKY_API_KEY}",
        MASTER_COPY: TEST_MASTER_SECRET,
        LOG_LEVEL: "info",
      })
    }
    requiresUserToken: true
    userToken: { kind: manual, displayName: Leaky }
oauth:
${idpSection(idp)}
`,
    { IDP_SECRET: idp.clientSecret, LEAKY_API_KEY: apiKey },
  );
  const parsed = () => gw.logs.map((line) => JSON.parse(line));
  const stderr = () => parsed().filter((l) => l.msg === "backend stderr").map((l) => l.line);
  try {
    const agent = new UserAgent();
    idp.loginAs = { email: "alice@example.com" };
    const page = await openTokensPage(agent, socket.url);
    await (await postForm(agent, socket.url, "/my/tokens/set", {
      csrf: csrfOf(page),
      service: "leaky",
      token: personToken,
      next: "tokens",
    })).body?.cancel();
    const { client } = await connectWithOAuth(agent, `${socket.url}/leaky/mcp`);
    const names = ["SERVICE_TOKEN", "API_KEY", "MASTER_COPY", "LOG_LEVEL"];
    await client.callTool({ name: "print_environment", arguments: { names } });
    // A line longer than the 2,000 characters logged, cut 12 characters into the token.
    const pad = 2000 - "fixture says SERVICE_TOKEN=".length - 12;
    await client.callTool({
      name: "print_environment",
      arguments: { names: ["SERVICE_TOKEN"], pad },
    });
    // Written to stdout, the same values are not JSON-RPC: the error quotes them.
    const failed = await client.callTool({
      name: "print_environment",
      arguments: { names: ["SERVICE_TOKEN", "API_KEY"], stream: "stdout" },
    }).then(() => "answered", (error: Error) => error.message);
    await client.close().catch(() => {});
    assert.match(failed, /backend wrote invalid JSON-RPC: "SERVICE_TOKEN=\*\*\* API_KEY=\*\*\*"/);

    await waitUntil("the backend's five stderr lines in the log", () => stderr().length >= 5);
    const lines = stderr();
    for (const name of ["SERVICE_TOKEN", "API_KEY", "MASTER_COPY"]) {
      assert.ok(
        lines.includes(`fixture says ${name}=***`),
        `${name} masked: ${lines.map((line: string) => line.slice(-60)).join(" | ")}`,
      );
    }
    assert.ok(lines.includes("fixture says LOG_LEVEL=info"), "a value that is no secret stays");
    const cut = lines.find((line: string) => line.startsWith("...."));
    assert.ok(cut?.endsWith("fixture says SERVICE_TOKEN=***"), `the cut line: ${cut?.slice(-60)}`);
    const backendError = parsed().find((l) => l.msg === "backend error");
    assert.match(backendError?.error, /invalid JSON-RPC: "SERVICE_TOKEN=\*\*\* API_KEY=\*\*\*"/);

    const logs = gw.logs.join("\n");
    for (
      const [name, value] of [
        ["person's token", personToken],
        ["the start of the person's token", personToken.slice(0, 12)],
        ["API key from the environment", apiKey],
        ["master secret", TEST_MASTER_SECRET],
      ]
    ) assert.ok(!logs.includes(value), `the logs carry the ${name}`);
  } finally {
    await gw.close();
    await idp.close();
  }
});

Deno.test("an HTTP backend whose error page echoes its Authorization header: the error shows *** instead", async () => {
  const apiKey = "echo-key-5e6f7a8b9c0d1e2f";
  const ready = Promise.withResolvers<number>();
  const backend = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: ({ port }) => ready.resolve(port) },
    async (request) => {
      await request.body?.cancel();
      return new Response(`denied: you sent ${request.headers.get("authorization")}`, {
        status: 500,
      });
    },
  );
  const gw = await startGateway(
    `
servers:
  echo:
    transport: streamable-http
    url: http://127.0.0.1:${await ready.promise}/mcp
    headers: { Authorization: "Bearer \${ECHO_KEY}" }
    public: true
`,
    { ECHO_KEY: apiKey },
  );
  try {
    const init = await post(`${gw.url}/echo/mcp`, INIT);
    const message = (init.json as { error?: { message: string } })?.error?.message ?? init.text;
    assert.match(message, /denied: you sent \*\*\*/);
    assert.ok(!init.text.includes(apiKey), `the client was shown the key: ${init.text}`);
    assert.ok(!gw.logs.join("\n").includes(apiKey), "the logs carry the key");
  } finally {
    await gw.close();
    await backend.shutdown();
  }
});
