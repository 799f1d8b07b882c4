/**
 * Groups kept no older than `oauth.groupsMaxAge`, with a real OpenID Connect provider behind
 * the gateway (tests/fixtures/idp.ts, oidc-provider): a refresh after that reads them again with
 * the provider's tokens kept from the sign-in (its refresh token where it issues one, else
 * userinfo with its access token), so a person taken out of a group loses what the group gave
 * them; a person the provider no longer knows loses the grant; a provider that is down keeps the
 * last groups, and the log says so. The gateway's clock moves; the provider's runs as it does.
 */
import assert from "node:assert/strict";
import { type TestClock, testClock } from "./fixtures/clock.ts";
import type { TestGateway } from "./fixtures/gateway.ts";
import type { IdpOptions, TestIdp } from "./fixtures/idp.ts";
import { groupsIdpSection, startGroupsIdpGateway } from "./fixtures/groups_idp_gateway.ts";
import {
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
const MINUTE = 60_000;

interface Setup {
  gw: TestGateway;
  idp: TestIdp;
  clock: TestClock;
  clientId: string;
}

/** alpha's tool `pid` is for editors only; groups older than 10 minutes are read again. */
async function withRenewal(options: IdpOptions, test: (s: Setup) => Promise<void>) {
  const clock = testClock();
  const { gw, idp, close } = await startGroupsIdpGateway(
    (idp) => `
baseUrl: http://127.0.0.1:{{PORT}}
servers:
  alpha:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts"]
    tools: { rules: [{ tools: [pid], access: { groups: [editors] } }] }
oauth:
  groupsMaxAge: 10m
${groupsIdpSection(idp)}
`,
    { idp: options, gateway: { clock } },
  );
  try {
    const { client_id } = await registerClient(gw.url);
    await test({ gw, idp, clock, clientId: client_id });
  } finally {
    await close();
  }
}

async function signIn(s: Setup) {
  const code = (await obtainCode(new UserAgent(), s.gw.url, s.clientId, `${s.gw.url}/alpha`))
    .get("code")!;
  const tokens = await exchangeCode(s.gw.url, s.clientId, code);
  assert.equal(tokens.status, 200, JSON.stringify(tokens.json));
  return tokens.json;
}

function refresh(s: Setup, refreshToken: string) {
  return token(s.gw.url, {
    grant_type: "refresh_token",
    client_id: s.clientId,
    refresh_token: refreshToken,
  });
}

/** The tools alpha lists to a 2026 request with `accessToken`. */
async function tools(s: Setup, accessToken: string): Promise<string[]> {
  const listed = await listTools2026(`${s.gw.url}/alpha/mcp`, accessToken);
  const body = await listed.json();
  assert.ok(body.result, JSON.stringify(body));
  return (body.result.tools as { name: string }[]).map((tool) => tool.name).sort();
}

Deno.test("groups older than groupsMaxAge are read again at a refresh with the provider's refresh token: out of editors, out of the editors' tool", async () => {
  await withRenewal({ refreshTokens: true }, async (s) => {
    s.idp.loginAs = { email: "alice@example.com", claims: { groups: ["editors", "staff"] } };
    const first = await signIn(s);
    assert.deepEqual(jwtClaims(first.access_token).groups, ["editors"]);
    assert.deepEqual(await tools(s, first.access_token), ["echo", "pid"]);

    // Within groupsMaxAge the provider is not asked.
    s.idp.update("alice@example.com", { claims: { groups: ["staff"] } });
    const soon = await refresh(s, first.refresh_token);
    assert.equal(soon.status, 200, JSON.stringify(soon.json));
    assert.equal(s.idp.grants.refresh_token ?? 0, 0);
    assert.deepEqual(jwtClaims(soon.json.access_token).groups, ["editors"]);

    // Past it, the refresh asks the provider, which no longer names her an editor.
    s.clock.advance(11 * MINUTE);
    const later = await refresh(s, soon.json.refresh_token);
    assert.equal(later.status, 200, JSON.stringify(later.json));
    assert.equal(s.idp.grants.refresh_token, 1);
    assert.equal(jwtClaims(later.json.access_token).groups, undefined, "no group the rules name");
    assert.deepEqual(await tools(s, later.json.access_token), ["echo"]);
    // The grant itself is judged by the groups as read now, whichever of its tokens is sent.
    assert.deepEqual(await tools(s, soon.json.access_token), ["echo"]);

    // Back in editors: the next read after groupsMaxAge says so (with the rotated refresh token).
    s.idp.update("alice@example.com", { claims: { groups: ["editors"] } });
    s.clock.advance(11 * MINUTE);
    const again = await refresh(s, later.json.refresh_token);
    assert.equal(again.status, 200, JSON.stringify(again.json));
    assert.equal(s.idp.grants.refresh_token, 2);
    assert.deepEqual(await tools(s, again.json.access_token), ["echo", "pid"]);
  });
});

Deno.test("out of her last group, the provider sends no groups claim at all (as Okta and Entra ID do): past groupsMaxAge the refresh reads that as no groups", async () => {
  await withRenewal({ refreshTokens: true }, async (s) => {
    s.idp.loginAs = { email: "erin@example.com", claims: { groups: ["editors"] } };
    const first = await signIn(s);
    assert.deepEqual(await tools(s, first.access_token), ["echo", "pid"]);
    // The same absence at a sign-in means no groups; a refresh must not keep "editors" for it.
    s.idp.update("erin@example.com", { claims: {} });
    s.clock.advance(11 * MINUTE);
    const later = await refresh(s, first.refresh_token);
    assert.equal(later.status, 200, JSON.stringify(later.json));
    assert.equal(s.idp.grants.refresh_token, 1);
    assert.equal(jwtClaims(later.json.access_token).groups, undefined, "no group left");
    assert.deepEqual(await tools(s, later.json.access_token), ["echo"]);
  });
});

Deno.test("a person the provider no longer knows loses the grant at the refresh after groupsMaxAge", async () => {
  await withRenewal({ refreshTokens: true }, async (s) => {
    s.idp.loginAs = { email: "bob@example.com", claims: { groups: ["editors"] } };
    const first = await signIn(s);
    s.idp.forget("bob@example.com");
    s.clock.advance(11 * MINUTE);
    const refused = await refresh(s, first.refresh_token);
    assert.equal(refused.status, 400);
    assert.equal(refused.json.error, "invalid_grant");
    assert.match(refused.json.error_description, /identity provider no longer accepts/);
    // The grant is revoked: its access token stops working too.
    const call = await fetch(`${s.gw.url}/alpha/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${first.access_token}`,
        "content-type": "application/json",
      },
      body: "{}",
    });
    await call.body?.cancel();
    assert.equal(call.status, 401);
  });
});

Deno.test("a provider that refuses the refresh with invalid_grant ends the grant; one that is down keeps the last groups and the log says so", async () => {
  await withRenewal({ refreshTokens: true }, async (s) => {
    s.idp.loginAs = { email: "carol@example.com", claims: { groups: ["editors"] } };
    const first = await signIn(s);
    s.idp.down = true;
    s.clock.advance(11 * MINUTE);
    const kept = await refresh(s, first.refresh_token);
    assert.equal(kept.status, 200, JSON.stringify(kept.json));
    assert.deepEqual(jwtClaims(kept.json.access_token).groups, ["editors"]);
    assert.ok(
      s.gw.logs.some((line) =>
        line.includes("could not be asked about the person") && line.includes("carol")
      ),
      "the log says the groups could not be read again",
    );
    s.idp.down = false;
    s.idp.refuseRefresh = true;
    const refused = await refresh(s, kept.json.refresh_token);
    assert.equal(refused.status, 400);
    assert.equal(refused.json.error, "invalid_grant");
  });
});

Deno.test("without a refresh token from the provider, groups are read again through userinfo while its access token lasts", async () => {
  await withRenewal({}, async (s) => {
    s.idp.loginAs = {
      email: "dave@example.com",
      claims: { groups: ["editors"] },
      claimsIn: "userinfo",
    };
    const first = await signIn(s);
    assert.deepEqual(jwtClaims(first.access_token).groups, ["editors"]);
    s.idp.update("dave@example.com", { claims: { groups: [] } });
    s.clock.advance(11 * MINUTE);
    const later = await refresh(s, first.refresh_token);
    assert.equal(later.status, 200, JSON.stringify(later.json));
    assert.equal(jwtClaims(later.json.access_token).groups, undefined, "no group the rules name");
    assert.deepEqual(await tools(s, later.json.access_token), ["echo"]);
  });
});
