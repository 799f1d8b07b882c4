/** GitHub as the company login: organisation and verified-address rules, against its wire format. */
import assert from "node:assert/strict";
import { REDIRECT_URI } from "./fixtures/oauth_client.ts";
import { startFakeGithub } from "./fixtures/fake_github.ts";
import { type GatewayOptions, startGateway, type TestGateway } from "./fixtures/gateway.ts";
import {
  authorizeParams,
  exchangeCode,
  jwtClaims,
  obtainCode,
  registerClient,
  token,
} from "./fixtures/oauth_raw.ts";
import { testClock } from "./fixtures/clock.ts";
import { UserAgent } from "./fixtures/user_agent.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const ROOT = new URL("../", import.meta.url).pathname;

type FakeGithub = Awaited<ReturnType<typeof startFakeGithub>>;

/** A gateway whose company login is the fake GitHub; `oauth` adds lines under `oauth:`. */
function githubGateway(github: FakeGithub, oauth: string, options: GatewayOptions = {}) {
  return startGateway(
    `
baseUrl: http://127.0.0.1:{{PORT}}
servers:
  alpha: { transport: stdio, command: deno, env: { ${DENO_DIR_YAML} }, args: [run, "${ROOT}tests/fixtures/minimal_server.ts"] }
oauth:
  idp:
    provider: github
    clientId: ${github.clientId}
    clientSecret: ${github.clientSecret}
    githubUrl: ${github.url}
    githubApiUrl: ${github.url}/api
${oauth}
`,
    {},
    options,
  );
}

/** The person's sign-in through the browser, to the gateway's tokens. */
async function signIn(gw: TestGateway, clientId: string) {
  const code = (await obtainCode(new UserAgent(), gw.url, clientId, `${gw.url}/alpha`))
    .get("code")!;
  return (await exchangeCode(gw.url, clientId, code)).json;
}

/** A sign-in the gateway refuses: 403 with a page matching `message`. */
async function assertRefused(gw: TestGateway, clientId: string, message: RegExp) {
  const params = await authorizeParams(clientId, {}, `${gw.url}/alpha`);
  const stop = await new UserAgent().follow(
    `${gw.url}/authorize?${params}`,
    (u) => u.href.startsWith(REDIRECT_URI),
  );
  assert.equal(stop.response.status, 403);
  assert.match(stop.body, message);
}

function refresh(gw: TestGateway, clientId: string, refreshToken: string) {
  return token(gw.url, {
    grant_type: "refresh_token",
    client_id: clientId,
    refresh_token: refreshToken,
  });
}

Deno.test("github login: an org member gets a token; outsiders and unverified addresses do not", async () => {
  const github = await startFakeGithub();
  const gw = await githubGateway(github, "  allow: { orgs: [acme], domains: [example.com] }");
  try {
    const client = await registerClient(gw.url);
    const tokens = await signIn(gw, client.client_id);
    const claims = jwtClaims(tokens.access_token);
    assert.equal(claims.sub, "github:4242");
    assert.equal(claims.email, "octo@users.noreply.example");

    const refusedFor = async (user: typeof github.user, message: RegExp) => {
      github.user = user;
      await assertRefused(gw, client.client_id, message);
    };
    await refusedFor(
      {
        id: 7,
        login: "stranger",
        emails: [{ email: "s@else.example", primary: true, verified: true }],
        orgs: ["other"],
      },
      /s@else\.example is not permitted/,
    );
    // An address at the allowed domain that GitHub has not verified admits nobody.
    await refusedFor(
      {
        id: 8,
        login: "claimer",
        emails: [{ email: "ceo@example.com", primary: true, verified: false }],
        orgs: [],
      },
      /not permitted/,
    );
    // A verified secondary address at the allowed domain does admit.
    github.user = {
      id: 9,
      login: "dev",
      emails: [{ email: "dev@home.example", primary: true, verified: true }, {
        email: "dev@example.com",
        primary: false,
        verified: true,
      }],
      orgs: [],
    };
    const admitted = await obtainCode(new UserAgent(), gw.url, client.client_id, `${gw.url}/alpha`);
    assert.ok(admitted.get("code"));
  } finally {
    await gw.close();
    await github.close();
  }
});

Deno.test("github login: organisations and teams become groups, read across pages, in the token and in allow.groups", async () => {
  const github = await startFakeGithub();
  const gw = await githubGateway(github, "  allow: { groups: [Acme/Platform, acme] }");
  try {
    const client = await registerClient(gw.url);
    const groupsInToken = async () =>
      jwtClaims((await signIn(gw, client.client_id)).access_token).groups;
    // 130 teams: GitHub serves at most 100 a page, so "platform" is on the second.
    const teams = Array.from({ length: 129 }, (_, i) => ({ org: "Acme", slug: `team-${i}` }));
    github.user = {
      id: 11,
      login: "builder",
      emails: [{ email: "builder@else.example", primary: true, verified: true }],
      orgs: ["Zeta"],
      teams: [...teams, { org: "Acme", slug: "Platform" }],
    };
    // Admitted by the team alone (not an org member, no listed address); only the groups the
    // configuration names reach the token.
    assert.deepEqual(await groupsInToken(), ["acme/platform"]);

    // Without read:org GitHub refuses the teams: sign-in goes on with the organisations.
    github.user = { ...github.user, orgs: ["ACME"], teamsStatus: 403 };
    assert.deepEqual(await groupsInToken(), ["acme"]);
    assert.ok(
      gw.logs.some((line) =>
        line.includes("GitHub refused to list the person's teams") && line.includes("read:org")
      ),
      gw.logs.join("\n"),
    );

    github.user = { ...github.user, orgs: ["zeta"], teamsStatus: undefined, teams: teams };
    await assertRefused(gw, client.client_id, /builder@else\.example is not permitted/);
  } finally {
    await gw.close();
    await github.close();
  }
});

Deno.test("github login: a refresh past groupsMaxAge reads the organisations again; out of the org, or the app revoked, the grant ends", async () => {
  const github = await startFakeGithub();
  const clock = testClock();
  const gw = await githubGateway(github, "  allow: { orgs: [acme] }\n  groupsMaxAge: 10m", {
    clock,
  });
  try {
    const client = await registerClient(gw.url);
    const first = await signIn(gw, client.client_id);
    // Still in acme, in a new team too: the read after groupsMaxAge keeps the grant going.
    github.update(4242, { orgs: ["Acme"], teams: [{ org: "Acme", slug: "Ops" }] });
    clock.advance(11 * 60_000);
    const kept = await refresh(gw, client.client_id, first.refresh_token);
    assert.equal(kept.status, 200, JSON.stringify(kept.json));
    // Out of acme at GitHub: the next read ends the grant (the access policy no longer admits).
    github.update(4242, { orgs: [], teams: [] });
    clock.advance(11 * 60_000);
    const out = await refresh(gw, client.client_id, kept.json.refresh_token);
    assert.equal(out.status, 400);
    assert.equal(out.json.error, "invalid_grant");
    assert.match(out.json.error_description, /access was withdrawn/);

    // A new sign-in, then the person revokes the app at GitHub: GitHub answers 401.
    github.user = { ...github.user, orgs: ["Acme"] };
    const second = await signIn(gw, client.client_id);
    github.revokeTokens();
    clock.advance(11 * 60_000);
    const revoked = await refresh(gw, client.client_id, second.refresh_token);
    assert.equal(revoked.status, 400);
    assert.match(revoked.json.error_description, /identity provider no longer accepts/);
  } finally {
    await gw.close();
    await github.close();
  }
});

Deno.test("github login with a GitHub App's expiring tokens: past groupsMaxAge the gateway refreshes the person's token at GitHub, keeps the rotated one, and ends the grant when GitHub refuses it", async () => {
  const github = await startFakeGithub();
  github.expiringTokens = true;
  const clock = testClock();
  const gw = await githubGateway(github, "  allow: { orgs: [acme] }\n  groupsMaxAge: 10m", {
    clock,
  });
  try {
    const client = await registerClient(gw.url);
    let tokens = await signIn(gw, client.client_id);
    // GitHub's 8-hour token has expired: each read refreshes it, with the token rotated last time.
    for (const round of [1, 2]) {
      clock.advance(9 * 60 * 60_000);
      const next = await refresh(gw, client.client_id, tokens.refresh_token);
      assert.equal(next.status, 200, JSON.stringify(next.json));
      assert.equal(github.refreshes, round);
      tokens = next.json;
    }
    github.revokeTokens();
    clock.advance(9 * 60 * 60_000);
    const refused = await refresh(gw, client.client_id, tokens.refresh_token);
    assert.equal(refused.status, 400);
    assert.match(refused.json.error_description, /identity provider no longer accepts/);
  } finally {
    await gw.close();
    await github.close();
  }
});
