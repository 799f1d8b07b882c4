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
import { connectWithOAuth } from "./fixtures/oauth_client.ts";
import { TEST_MASTER_SECRET } from "./fixtures/oauth_gateway.ts";
import { token } from "./fixtures/oauth_raw.ts";
import { UserAgent } from "./fixtures/user_agent.ts";

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
