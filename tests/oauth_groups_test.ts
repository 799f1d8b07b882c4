/**
 * Groups from the company identity provider, with a real OpenID Connect provider behind the
 * gateway: read at sign-in from the ID token or userinfo (`oauth.idp.groupsClaim`), admitted
 * by `oauth.allow.groups`, carried in the access token as far as the configuration names them.
 */
import assert from "node:assert/strict";
import { REDIRECT_URI } from "./fixtures/oauth_client.ts";
import type { TestGateway } from "./fixtures/gateway.ts";
import type { TestIdp } from "./fixtures/idp.ts";
import { groupsIdpSection, startGroupsIdpGateway } from "./fixtures/groups_idp_gateway.ts";
import {
  authorizeParams,
  exchangeCode,
  jwtClaims,
  obtainCode,
  registerClient,
  token,
} from "./fixtures/oauth_raw.ts";
import { listTools2026 } from "./fixtures/raw.ts";
import { UserAgent } from "./fixtures/user_agent.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const ROOT = new URL("../", import.meta.url).pathname;

async function withGroupsGateway(
  test: (gw: TestGateway, idp: TestIdp) => Promise<void>,
  alpha = "",
): Promise<void> {
  const { gw, idp, close } = await startGroupsIdpGateway((idp) => `
baseUrl: http://127.0.0.1:{{PORT}}
servers:
  alpha: { transport: stdio, command: deno, env: { ${DENO_DIR_YAML} }, args: [run, "${ROOT}tests/fixtures/minimal_server.ts"]${alpha} }
oauth:
${groupsIdpSection(idp, ["domains: [example.com]", "groups: [Editors]"])}
`);
  try {
    await test(gw, idp);
  } finally {
    await close();
  }
}

/** Signs in afresh (a new browser) and exchanges the code: the token response. */
async function signIn(gw: TestGateway, clientId: string) {
  const code = (await obtainCode(new UserAgent(), gw.url, clientId, `${gw.url}/alpha`))
    .get("code")!;
  const tokens = await exchangeCode(gw.url, clientId, code);
  assert.equal(tokens.status, 200, JSON.stringify(tokens.json));
  return tokens.json;
}

Deno.test("groups from the identity provider: the token carries those the configuration names, and allow.groups admits by them", async () => {
  await withGroupsGateway(async (gw, idp) => {
    const client = await registerClient(gw.url);
    // In the ID token; of a person's many groups only the one the configuration names.
    const many = Array.from({ length: 300 }, (_, i) => `directory-group-${i}`);
    idp.loginAs = {
      email: "alice@example.com",
      claims: { groups: ["Editors", "ops", ...many] },
      claimsIn: "id_token",
    };
    assert.deepEqual(jwtClaims((await signIn(gw, client.client_id)).access_token).groups, [
      "Editors",
    ]);

    // Only in userinfo, for an address outside example.com: admitted by the group alone.
    idp.loginAs = {
      email: "carol@else.example",
      claims: { groups: ["Editors"] },
      claimsIn: "userinfo",
    };
    const carol = jwtClaims((await signIn(gw, client.client_id)).access_token);
    assert.equal(carol.email, "carol@else.example");
    assert.deepEqual(carol.groups, ["Editors"]);

    // OIDC group names are compared exactly: "editors" is another group.
    for (const groups of [["editors"], []]) {
      idp.loginAs = { email: "dave@else.example", claims: { groups } };
      const params = await authorizeParams(client.client_id, {}, `${gw.url}/alpha`);
      const stop = await new UserAgent().follow(
        `${gw.url}/authorize?${params}`,
        (u) => u.href.startsWith(REDIRECT_URI),
      );
      assert.equal(stop.response.status, 403);
      assert.match(stop.body, /dave@else\.example is not permitted/);
    }
    assert.ok(
      gw.logs.some((line) => line.includes("more groups than the gateway keeps")),
      "302 groups are more than the gateway keeps, and it says so",
    );
  });
});

Deno.test("groups: a refresh after a reload that names another group puts it in the new access token", async () => {
  await withGroupsGateway(async (gw, idp) => {
    const client = await registerClient(gw.url);
    idp.loginAs = { email: "alice@example.com", claims: { groups: ["Editors", "ops"] } };
    const first = await signIn(gw, client.client_id);
    assert.deepEqual(jwtClaims(first.access_token).groups, ["Editors"]);
    // As a configuration reload would: a rule now names "ops".
    gw.config.oauth!.allow.groups.push("ops");
    const refreshed = await token(gw.url, {
      grant_type: "refresh_token",
      client_id: client.client_id,
      refresh_token: first.refresh_token,
    });
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.json));
    assert.deepEqual(jwtClaims(refreshed.json.access_token).groups, ["Editors", "ops"]);
  });
});

Deno.test("a 2026 client's tools follow the groups of the token it sends, when one person holds tokens of two sign-ins", async () => {
  const rules = `, tools: { rules: [{ tools: [pid], access: { groups: [ops] } }] }`;
  await withGroupsGateway(async (gw, idp) => {
    const client = await registerClient(gw.url);
    idp.loginAs = { email: "dana@example.com", claims: { groups: ["Editors"] } };
    const before = (await signIn(gw, client.client_id)).access_token;
    idp.loginAs = { email: "dana@example.com", claims: { groups: ["Editors", "ops"] } };
    const after = (await signIn(gw, client.client_id)).access_token;
    const tools = async (accessToken: string) => {
      const listed = await listTools2026(`${gw.url}/alpha/mcp`, accessToken);
      const body = await listed.json();
      return (body.result.tools as { name: string }[]).map((tool) => tool.name).sort();
    };
    // Both tokens are the same person's; each request is judged by its own token's groups.
    assert.deepEqual(await tools(after), ["echo", "pid"]);
    assert.deepEqual(await tools(before), ["echo"]);
    assert.deepEqual(await tools(after), ["echo", "pid"]);
  }, rules);
});
