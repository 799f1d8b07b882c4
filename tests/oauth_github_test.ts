/** GitHub as the company login: organisation and verified-address rules, against its wire format. */
import assert from "node:assert/strict";
import { REDIRECT_URI } from "./fixtures/oauth_client.ts";
import { startFakeGithub } from "./fixtures/fake_github.ts";
import { startGateway } from "./fixtures/gateway.ts";
import {
  authorizeParams,
  exchangeCode,
  jwtClaims,
  obtainCode,
  registerClient,
} from "./fixtures/oauth_raw.ts";
import { UserAgent } from "./fixtures/user_agent.ts";

const ROOT = new URL("../", import.meta.url).pathname;

Deno.test("github login: an org member gets a token; outsiders and unverified addresses do not", async () => {
  const github = await startFakeGithub();
  const gw = await startGateway(`
baseUrl: http://127.0.0.1:{{PORT}}
servers:
  alpha: { transport: stdio, command: deno, args: [run, "${ROOT}tests/fixtures/minimal_server.ts"] }
oauth:
  idp:
    provider: github
    clientId: ${github.clientId}
    clientSecret: ${github.clientSecret}
    githubUrl: ${github.url}
    githubApiUrl: ${github.url}/api
  allow: { orgs: [acme], domains: [example.com] }
`);
  try {
    const client = await registerClient(gw.url);
    const code = (await obtainCode(new UserAgent(), gw.url, client.client_id, `${gw.url}/alpha`))
      .get("code")!;
    const tokens = (await exchangeCode(gw.url, client.client_id, code)).json;
    const claims = jwtClaims(tokens.access_token);
    assert.equal(claims.sub, "github:4242");
    assert.equal(claims.email, "octo@users.noreply.example");

    const refusedFor = async (user: typeof github.user, message: RegExp) => {
      github.user = user;
      const params = await authorizeParams(client.client_id, {}, `${gw.url}/alpha`);
      const stop = await new UserAgent().follow(
        `${gw.url}/authorize?${params}`,
        (u) => u.href.startsWith(REDIRECT_URI),
      );
      assert.equal(stop.response.status, 403);
      assert.match(stop.body, message);
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
