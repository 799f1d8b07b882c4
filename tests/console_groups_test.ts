/**
 * An administrator by group (`admin.groups`) taken out of that group at the company identity
 * provider loses the console once their groups are older than `oauth.groupsMaxAge`, not when
 * their console session (up to 12 h while used) or sign-in ends: the provider is asked again
 * with the refresh token kept from the sign-in, as for tokens. Real oidc-provider
 * (tests/fixtures/idp.ts) and gateway; the browser is tests/fixtures/user_agent.ts.
 */
import assert from "node:assert/strict";
import { testClock } from "./fixtures/clock.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";
import { groupsIdpSection, startGroupsIdpGateway } from "./fixtures/groups_idp_gateway.ts";
import { TEST_MASTER_SECRET } from "./fixtures/oauth_gateway.ts";
import { UserAgent } from "./fixtures/user_agent.ts";

const MINUTE = 60_000;
const DORA = "dora@example.com";

Deno.test("an admin by group taken out of it past groupsMaxAge is refused the console and its actions", async () => {
  const clock = testClock();
  const { gw, idp, close } = await startGroupsIdpGateway(
    (idp, baseUrl) => `
baseUrl: ${baseUrl}
secret: ${TEST_MASTER_SECRET}
servers:
  files:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, "does-not-run.ts"]
oauth:
  groupsMaxAge: 10m
${groupsIdpSection(idp)}
admin:
  groups: [gateway-admins]
  idleTimeout: 2h
`,
    { idp: { refreshTokens: true }, gateway: { clock } },
  );
  try {
    idp.loginAs = { email: DORA, claims: { groups: ["gateway-admins"] } };
    const dora = new UserAgent();
    const overview = await dora.follow(`${gw.url}/admin`, () => false);
    assert.equal(overview.response.status, 200, overview.body.slice(0, 300));
    const csrf = /name="csrf" value="([^"]+)"/.exec(overview.body)?.[1];
    assert.ok(csrf, "the console's forms carry a CSRF token");

    // Within groupsMaxAge the provider is not asked again.
    idp.update(DORA, { claims: { groups: [] } });
    clock.advance(5 * MINUTE);
    const soon = await dora.request(`${gw.url}/admin`);
    assert.equal(soon.status, 200);
    await soon.body?.cancel();

    // Past it the provider says she is no longer an administrator.
    clock.advance(6 * MINUTE);
    const later = await dora.follow(`${gw.url}/admin/people`, () => false);
    assert.equal(later.response.status, 403, later.body.slice(0, 300));
    const acted = await dora.request(`${gw.url}/admin/people/revoke`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        origin: new URL(gw.url).origin,
      },
      body: new URLSearchParams({ csrf, grant: "any" }),
    });
    assert.ok(acted.status === 401 || acted.status === 403, `refused, got ${acted.status}`);
    await acted.body?.cancel();
  } finally {
    await close();
  }
});
