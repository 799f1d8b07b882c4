/**
 * Enterprise-managed authorization end to end, with real parts: the company IdP is the
 * project's oidc-provider with a real RFC 8693 token-exchange grant that signs ID-JAGs; the
 * client is the SDK v2 `CrossAppAccessProvider` with its IdP exchange helper; the person signs
 * in to the client app at the IdP once, and no browser ever visits Gatehouse.
 */
import assert from "node:assert/strict";
import {
  CrossAppAccessProvider,
  discoverAndRequestJwtAuthGrant,
} from "@modelcontextprotocol/client";
import { IdJagKeys, type IdJagPolicy, signInToApp } from "./fixtures/idp_id_jag.ts";
import { type OAuthSetup, startOAuthGateway } from "./fixtures/oauth_gateway.ts";
import { connectV2Client, type Negotiation } from "./fixtures/v2_client.ts";
import { jwtClaims } from "./fixtures/oauth_raw.ts";

const GW_CLIENT = "chat-gw";
const GW_SECRET = "chat-gateway-secret-0123456789abcdef0123";

interface Enterprise {
  setup: OAuthSetup;
  keys: IdJagKeys;
  policy: IdJagPolicy;
  idToken: string;
  close(): Promise<void>;
}

async function startEnterprise(extra = ""): Promise<Enterprise> {
  const keys = await IdJagKeys.create();
  const policy: IdJagPolicy = { clients: { "chat-app": GW_CLIENT }, lifetime: 300, issued: 0 };
  const setup = await startOAuthGateway(
    `  idJag: true
  clients:
    - id: ${GW_CLIENT}
      secret: ${GW_SECRET}
      name: Chat${extra}`,
    "",
    {},
    { idJag: { keys, policy } },
  );
  const idToken = await signInToApp(setup.idp.issuer, setup.idp.idJag!.app);
  return { setup, keys, policy, idToken, close: () => setup.close() };
}

/** The client app's provider: it asks the IdP for an ID-JAG whenever Gatehouse wants a token. */
function crossAppProvider(e: Enterprise): CrossAppAccessProvider {
  const app = e.setup.idp.idJag!.app;
  return new CrossAppAccessProvider({
    assertion: async (ctx) =>
      (await discoverAndRequestJwtAuthGrant({
        idpUrl: e.setup.idp.issuer,
        audience: ctx.authorizationServerUrl,
        resource: ctx.resourceUrl,
        idToken: e.idToken,
        clientId: app.clientId,
        clientSecret: app.clientSecret,
        scope: ctx.scope,
        fetchFn: ctx.fetchFn,
      })).jwtAuthGrant,
    clientId: GW_CLIENT,
    clientSecret: GW_SECRET,
    expectedIssuer: e.setup.url,
  });
}

for (const negotiation of ["legacy", "pinned"] as Negotiation[]) {
  const revision = negotiation === "legacy" ? "2025-11-25" : "2026-07-28";
  Deno.test(`ID-JAG: the SDK v2 CrossAppAccessProvider lists and calls tools through /alpha/mcp (${revision})`, async () => {
    const e = await startEnterprise();
    try {
      const provider = crossAppProvider(e);
      const v2 = await connectV2Client(`${e.setup.url}/alpha/mcp`, {
        negotiation,
        authProvider: provider,
      });
      try {
        const tools = await v2.client.listTools();
        assert.ok(tools.tools.some((tool) => tool.name === "echo"), "the backend's tools listed");
        const result = await v2.client.callTool({ name: "echo", arguments: { said: "hello" } });
        assert.match(JSON.stringify(result.content), /hello/);
      } finally {
        await v2.close();
      }
      assert.equal(e.policy.issued, 1, "one ID-JAG asked of the IdP");
      const tokens = provider.tokens()!;
      assert.equal(tokens.refresh_token, undefined, "no refresh token for an ID-JAG");
      const claims = jwtClaims(tokens.access_token);
      assert.deepEqual(claims.aud, [`${e.setup.url}/alpha`], "the token opens exactly alpha");
      assert.equal(claims.email, "alice@example.com");
      assert.equal(claims.sub, "oidc:alice-example-com", "the person of an OIDC login");
      assert.equal(claims.client_id, GW_CLIENT);
      // The audit line names the parties and the jti, never the assertion.
      const audit = e.setup.gw.logs.map((line) => JSON.parse(line)).filter((line) =>
        line.event === "id_jag"
      );
      assert.equal(audit.length, 1);
      assert.equal(audit[0].outcome, "issued");
      assert.equal(audit[0].client, GW_CLIENT);
      assert.equal(audit[0].iss, e.setup.idp.issuer);
      assert.equal(audit[0].sub, "alice-example-com");
      assert.equal(typeof audit[0].jti, "string");
      assert.ok(!e.setup.gw.logs.join("\n").includes(e.idToken.split(".")[2]));
    } finally {
      await e.close();
    }
  });
}
