/**
 * Groups for ID-JAG grants, with the real test IdP: the configured groups claim of the ID-JAG
 * when it carries one, else the groups of the person's last browser sign-in at Gatehouse; and
 * `oauth.allow.groups` admits or refuses by them, as for a code-flow grant.
 */
import assert from "node:assert/strict";
import { groupsIdpSection, startGroupsIdpGateway } from "./fixtures/groups_idp_gateway.ts";
import { BASIC, GW_CLIENT, GW_SECRET, JWT_BEARER } from "./fixtures/jwt_bearer_gateway.ts";
import { IdJagKeys } from "./fixtures/idp_id_jag.ts";
import { exchangeCode, jwtClaims, obtainCode, registerClient } from "./fixtures/oauth_raw.ts";
import { UserAgent } from "./fixtures/user_agent.ts";
import { testClock } from "./fixtures/clock.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const MINUTE = 60_000;

Deno.test("ID-JAG groups: the claim when present, else the last browser sign-in's read again past groupsMaxAge; allow.groups judges by them", async () => {
  const keys = await IdJagKeys.create();
  const clock = testClock();
  const { gw, idp, close } = await startGroupsIdpGateway(
    (idp) => `
baseUrl: http://127.0.0.1:{{PORT}}
servers:
  alpha: { transport: stdio, command: deno, env: { ${DENO_DIR_YAML} }, args: [run, "${ROOT}tests/fixtures/minimal_server.ts"] }
oauth:
  groupsMaxAge: 10m
${groupsIdpSection(idp, ["groups: [Editors]"])}
  idJag: true
  clients:
    - id: ${GW_CLIENT}
      secret: ${GW_SECRET}
`,
    {
      idp: {
        idJag: { keys, policy: { clients: {}, lifetime: 300, issued: 0 } },
        refreshTokens: true,
      },
      gateway: { clock },
    },
  );
  try {
    const url = gw.url;
    const present = async (sub: string, email: string, extra: Record<string, unknown> = {}) => {
      // The IdP's ID-JAG is as fresh as the gateway's clock says, however far the test moved it.
      const now = Math.floor(clock.now() / 1000);
      const assertion = await keys.sign({
        iss: idp.issuer,
        sub,
        aud: url,
        client_id: GW_CLIENT,
        jti: crypto.randomUUID(),
        iat: now,
        exp: now + 300,
        resource: `${url}/alpha`,
        email,
        ...extra,
      });
      const response = await fetch(`${url}/token`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: BASIC,
        },
        body: new URLSearchParams({ grant_type: JWT_BEARER, assertion }),
      });
      return { status: response.status, body: await response.json() };
    };
    // Carried in the ID-JAG: admitted by it, and the token holds the named group.
    const withClaim = await present("erin", "erin@partner.example", { groups: ["Editors", "x"] });
    assert.equal(withClaim.status, 200, JSON.stringify(withClaim.body));
    assert.deepEqual(jwtClaims(withClaim.body.access_token).groups, ["Editors"]);

    // No claim and never signed in here: no groups, so allow.groups refuses.
    const unknown = await present("alice-example-com", "alice@example.com");
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.error_description, /^the person may not use this gateway: /);

    // Alice signs in once in a browser (the IdP names her an Editor); her next ID-JAG without
    // the claim is judged by those groups.
    idp.loginAs = { email: "alice@example.com", claims: { groups: ["Editors"] } };
    const client = await registerClient(url);
    const code = (await obtainCode(new UserAgent(), url, client.client_id, `${url}/alpha`))
      .get("code")!;
    assert.equal((await exchangeCode(url, client.client_id, code)).status, 200);
    const known = await present("alice-example-com", "alice@example.com");
    assert.equal(known.status, 200, JSON.stringify(known.body));
    assert.deepEqual(jwtClaims(known.body.access_token).groups, ["Editors"]);

    // The IdP takes her out of Editors. Within groupsMaxAge of her sign-in its groups stand;
    // past it they are read again from the IdP, as a refresh would, and she is refused.
    idp.update("alice@example.com", { claims: { groups: ["Staff"] } });
    assert.equal((await present("alice-example-com", "alice@example.com")).status, 200);
    clock.advance(11 * MINUTE);
    const removed = await present("alice-example-com", "alice@example.com");
    assert.equal(removed.status, 400, JSON.stringify(removed.body));
    assert.match(removed.body.error_description, /^the person may not use this gateway: /);
    assert.equal(idp.grants.refresh_token, 1, "the IdP was asked once, with its refresh token");
    // What it said is kept as her latest groups: the next ID-JAG does not ask it again.
    assert.equal((await present("alice-example-com", "alice@example.com")).status, 400);
    assert.equal(idp.grants.refresh_token, 1);
  } finally {
    await close();
  }
});
