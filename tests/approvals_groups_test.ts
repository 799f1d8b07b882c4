/**
 * Who may decide a `by: { groups }` approval is judged by the groups as the company identity
 * provider states them now, not as they were at a sign-in up to `oauth.ssoSessionTtl` ago: past
 * `oauth.groupsMaxAge` the provider is asked again (its refresh token kept from the sign-in),
 * so a person taken out of the approvers' group can neither see nor decide a held call. Real
 * parts: oidc-provider (tests/fixtures/idp.ts), the gateway, the minimal MCP server over stdio,
 * an SDK client; the approver is the scripted browser of tests/fixtures/user_agent.ts.
 */
import assert from "node:assert/strict";
import { testClock } from "./fixtures/clock.ts";
import { connectClient } from "./fixtures/client.ts";
import { stdioEnvYaml } from "./fixtures/deno_dir.ts";
import { groupsIdpSection, startGroupsIdpGateway } from "./fixtures/groups_idp_gateway.ts";
import { TEST_MASTER_SECRET } from "./fixtures/oauth_gateway.ts";
import { UserAgent } from "./fixtures/user_agent.ts";
import { within } from "./fixtures/waits.ts";
import { openKvStore } from "../src/store/kv.ts";
import { ApprovalRecords } from "../src/mcp/approvals/approval_records.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const ANN = "groups-test-token-ann-0123456789abcdef";
const MINUTE = 60_000;
const BOB = "bob@example.com";

Deno.test("an approver taken out of the rule's group past groupsMaxAge can no longer see or decide the call", async () => {
  const clock = testClock();
  const store = await openKvStore(":memory:");
  const { gw, idp, close } = await startGroupsIdpGateway(
    (idp, baseUrl) => `
baseUrl: ${baseUrl}
secret: ${TEST_MASTER_SECRET}
servers:
  files:
    transport: stdio
    command: deno
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts"]
    env: ${stdioEnvYaml()}
    serviceAuths: [{ type: bearer, tokens: ["\${ANN}"] }]
    approvals:
      - tools: [echo]
        by: { groups: [approvers] }
        timeout: 2h
oauth:
  groupsMaxAge: 10m
${groupsIdpSection(idp)}
`,
    { idp: { refreshTokens: true }, gateway: { store, clock }, env: { ANN } },
  );
  const client = await within("Ann's client", connectClient(gw.url, "files", "streamable", ANN));
  try {
    let held: { data?: { url?: string; approval?: string } } | undefined;
    try {
      await client.callTool({ name: "echo", arguments: { drop: "table" } });
    } catch (error) {
      held = error as typeof held;
    }
    const url = held?.data?.url;
    assert.ok(url, "the call is held and names its page");

    // Bob signs in as an approver: the page offers him the decision.
    idp.loginAs = { email: BOB, claims: { groups: ["approvers"] } };
    const bob = new UserAgent();
    const page = await bob.follow(url, () => false);
    assert.equal(page.response.status, 200, page.body.slice(0, 300));
    assert.match(page.body, /value="approve"/);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1];
    assert.ok(csrf, "the page carries a CSRF token");

    // He leaves the group; his sign-in (12 h) outlives groupsMaxAge (10 min).
    idp.update(BOB, { claims: { groups: [] } });
    clock.advance(11 * MINUTE);
    const decided = await bob.request(url, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        origin: new URL(gw.url).origin,
      },
      body: new URLSearchParams({ csrf, decision: "approve" }),
    });
    const said = await decided.text();
    assert.equal(decided.status, 404, `Bob may no longer decide: ${said.slice(0, 300)}`);
    const record = await new ApprovalRecords(store, clock).get(held!.data!.approval!);
    assert.equal(record?.status, "pending", "nothing was decided");
    const asked = idp.grants.refresh_token;
    assert.equal(asked, 1, "the provider was asked once");
    const again = await bob.request(url);
    assert.equal(again.status, 404, "nor see the call's arguments");
    await again.body?.cancel();
    assert.equal(idp.grants.refresh_token, asked, "the groups read are kept with the sign-in");
  } finally {
    await client.close();
    await close();
    store.close();
  }
});
