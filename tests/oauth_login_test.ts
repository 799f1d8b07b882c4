/**
 * Company login, the access policy, consent, sign-out and the metadata documents, with a real
 * OpenID Connect provider behind the gateway.
 */
import assert from "node:assert/strict";
import { connectWithOAuth, REDIRECT_URI } from "./fixtures/oauth_client.ts";
import { startOAuthGateway } from "./fixtures/oauth_gateway.ts";
import {
  authorizeParams,
  exchangeCode,
  jwtClaims,
  obtainCode,
  registerClient,
  token,
} from "./fixtures/oauth_raw.ts";
import { startGateway } from "./fixtures/gateway.ts";
import { UserAgent } from "./fixtures/user_agent.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const isCallback = (u: URL) => u.href.startsWith(REDIRECT_URI);

Deno.test("the access policy: outsiders and unverified addresses get a page, never a code", async () => {
  const setup = await startOAuthGateway();
  try {
    const client = await registerClient(setup.url);
    for (
      const [account, message] of [
        [{ email: "mallory@evil.example" }, /not permitted by this gateway&#39;s access policy/],
        [{ email: "bob@example.com", emailVerified: false }, /has not verified the address/],
      ] as const
    ) {
      setup.idp.loginAs = account;
      const agent = new UserAgent();
      const params = await authorizeParams(client.client_id, {}, `${setup.url}/alpha`);
      const stop = await agent.follow(`${setup.url}/authorize?${params}`, isCallback);
      assert.equal(stop.response.status, 403);
      assert.match(stop.body, message);
      assert.ok(!isCallback(stop.url), "no redirect to the client");
      assert.equal(agent.cookies(new URL(setup.url)).has("gatehouse_sso"), false);
    }
    // A listed address outside the domains is admitted.
    setup.idp.loginAs = { email: "contractor@partner.org" };
    const query = await obtainCode(
      new UserAgent(),
      setup.url,
      client.client_id,
      `${setup.url}/alpha`,
    );
    assert.ok(query.get("code"));
  } finally {
    await setup.close();
  }
});

Deno.test("a person removed from the policy can no longer refresh", async () => {
  const setup = await startOAuthGateway();
  try {
    setup.idp.loginAs = { email: "contractor@partner.org" };
    const client = await registerClient(setup.url);
    const code =
      (await obtainCode(new UserAgent(), setup.url, client.client_id, `${setup.url}/alpha`)).get(
        "code",
      )!;
    const tokens = (await exchangeCode(setup.url, client.client_id, code)).json;
    // As a config reload would: the address is no longer listed.
    setup.gw.config.oauth!.allow.emails = [];
    const refused = await token(setup.url, {
      grant_type: "refresh_token",
      client_id: client.client_id,
      refresh_token: tokens.refresh_token,
    });
    assert.equal(refused.status, 400);
    assert.equal(refused.json.error, "invalid_grant");
    assert.match(
      refused.json.error_description,
      /access was withdrawn: contractor@partner.org is not permitted/,
    );
  } finally {
    await setup.close();
  }
});

Deno.test("refresh: rotation, reuse revokes the family, resource narrows but never widens", async () => {
  const setup = await startOAuthGateway();
  try {
    const client = await registerClient(setup.url);
    const both = [`${setup.url}/alpha`, `${setup.url}/beta`];
    const code =
      (await obtainCode(new UserAgent(), setup.url, client.client_id, "", { resource: both })).get(
        "code",
      )!;
    const first = (await exchangeCode(setup.url, client.client_id, code)).json;
    const narrowed = await token(setup.url, {
      grant_type: "refresh_token",
      client_id: client.client_id,
      refresh_token: first.refresh_token,
      resource: `${setup.url}/beta`,
    });
    assert.equal(narrowed.status, 200, JSON.stringify(narrowed.json));
    assert.equal(narrowed.headers.get("cache-control"), "no-store");
    const aud = jwtClaims(narrowed.json.access_token).aud;
    assert.deepEqual(aud, [`${setup.url}/beta`]);

    // Reusing the first refresh token revokes the family: the rotated one dies too.
    const reuse = await token(setup.url, {
      grant_type: "refresh_token",
      client_id: client.client_id,
      refresh_token: first.refresh_token,
    });
    assert.equal(reuse.json.error, "invalid_grant");
    assert.match(reuse.json.error_description, /already used/);
    const rotated = await token(setup.url, {
      grant_type: "refresh_token",
      client_id: client.client_id,
      refresh_token: narrowed.json.refresh_token,
    });
    assert.equal(rotated.json.error, "invalid_grant");
    assert.match(rotated.json.error_description, /revoked/);
  } finally {
    await setup.close();
  }
});

Deno.test("consent: deny returns access_denied with state; a forged form is refused", async () => {
  const setup = await startOAuthGateway();
  try {
    const client = await registerClient(setup.url);
    const agent = new UserAgent();
    const params = await authorizeParams(client.client_id, {}, `${setup.url}/alpha`);
    const page = await agent.follow(`${setup.url}/authorize?${params}`, isCallback);
    assert.equal(page.response.status, 200);
    assert.match(page.body, /Allow <bdi>raw client<\/bdi> to use your tools\?/);
    assert.match(page.response.headers.get("content-security-policy")!, /frame-ancestors 'none'/);

    const forged = await agent.submitForm(page.url, page.body, {
      csrf: "forged",
      decision: "allow",
    }, isCallback);
    assert.equal(forged.response.status, 403);
    assert.match(forged.body, /This form has expired/);

    const denied = await agent.submitForm(page.url, page.body, { decision: "deny" }, isCallback);
    assert.equal(denied.url.searchParams.get("error"), "access_denied");
    assert.equal(denied.url.searchParams.get("state"), "xyz-state");
    assert.equal(denied.url.searchParams.get("iss"), setup.url);

    const again = await agent.submitForm(page.url, page.body, { decision: "allow" }, isCallback);
    assert.equal(again.response.status, 400, "an answered request cannot be answered twice");
  } finally {
    await setup.close();
  }
});

Deno.test("login callback: unknown state and a foreign browser get pages; logout ends SSO", async () => {
  const setup = await startOAuthGateway();
  try {
    const unknown = await fetch(`${setup.url}/oauth/callback?state=nope&code=x`);
    assert.equal(unknown.status, 400);
    assert.match(await unknown.text(), /This sign-in has expired/);

    const client = await registerClient(setup.url);
    const params = await authorizeParams(client.client_id, {}, `${setup.url}/alpha`);
    const starter = new UserAgent();
    const toIdp = await starter.request(`${setup.url}/authorize?${params}`);
    await toIdp.body?.cancel();
    const cookie = toIdp.headers.get("set-cookie")!;
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Lax/);
    assert.doesNotMatch(cookie, /Secure/, "http on 127.0.0.1: no Secure flag");
    // Another browser (an attacker forwarding the link) finishes the IdP part without the cookie.
    const thief = new UserAgent();
    const stop = await thief.follow(toIdp.headers.get("location")!, isCallback);
    assert.equal(stop.response.status, 400);
    assert.match(stop.body, /started elsewhere/);

    const agent = new UserAgent();
    await obtainCode(agent, setup.url, client.client_id, `${setup.url}/alpha`);
    assert.equal(setup.idp.logins, 2);
    const idpVisits = () =>
      agent.visited.filter((u) => u.startsWith(`${setup.idp.issuer}/auth?`)).length;
    await obtainCode(agent, setup.url, client.client_id, `${setup.url}/alpha`);
    assert.equal(idpVisits(), 1, "signed in: the second authorization skips the company login");
    const logoutPage = await agent.request(`${setup.url}/logout`);
    const body = await logoutPage.text();
    const out = await agent.submitForm(new URL(`${setup.url}/logout`), body, {}, () => false);
    assert.match(out.body, /You are signed out/);
    assert.equal(agent.cookies(new URL(setup.url)).has("gatehouse_sso"), false);
    await obtainCode(agent, setup.url, client.client_id, `${setup.url}/alpha`);
    assert.equal(idpVisits(), 2, "signed out: the company login is needed again");
  } finally {
    await setup.close();
  }
});

Deno.test("logout: a GET or a POST without this session's CSRF token leaves the sign-in alone; the form's POST ends it on the server, so the old cookie no longer signs in", async () => {
  const setup = await startOAuthGateway();
  try {
    const client = await registerClient(setup.url);
    const agent = new UserAgent();
    await obtainCode(agent, setup.url, client.client_id, `${setup.url}/alpha`);
    const cookie = agent.cookies(new URL(setup.url)).get("gatehouse_sso");
    assert.ok(cookie, "signed in");
    const withCookie = (value: string) => ({ cookie: `gatehouse_sso=${value}` });
    // A signed-in browser gets its code without the company login (consent is remembered).
    const signedIn = async (value: string): Promise<boolean> => {
      const params = await authorizeParams(client.client_id, {}, `${setup.url}/alpha`);
      const response = await fetch(`${setup.url}/authorize?${params}`, {
        headers: withCookie(value),
        redirect: "manual",
      });
      await response.body?.cancel();
      const location = response.headers.get("location") ?? "";
      if (location.startsWith(REDIRECT_URI)) return true;
      if (location.startsWith(setup.idp.issuer)) return false;
      throw new Error(`/authorize answered ${response.status} to ${location}`);
    };
    assert.equal(await signedIn(cookie), true);

    // A link or an image on another site, followed with the cookie: the page, never a sign-out.
    const get = await agent.request(`${setup.url}/logout`);
    const page = await get.text();
    assert.equal(get.status, 200);
    assert.equal(get.headers.get("set-cookie"), null);
    assert.match(page, /Sign out of Gatehouse\?/);
    assert.match(page, /<form method="post" action="\/logout">/);
    assert.match(get.headers.get("content-security-policy")!, /form-action 'self'/);
    assert.equal(await signedIn(cookie), true, "a GET does not sign out");

    const post = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(`${setup.url}/logout`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
        body: new URLSearchParams(fields),
        redirect: "manual",
      });
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1];
    // Bob's own page gives him a valid token for his session, not for Alice's.
    setup.idp.loginAs = { email: "bob@example.com" };
    const bob = new UserAgent();
    await obtainCode(bob, setup.url, client.client_id, `${setup.url}/alpha`);
    const bobsCsrf = /name="csrf" value="([^"]+)"/.exec(
      await (await bob.request(`${setup.url}/logout`)).text(),
    )![1];
    assert.notEqual(bobsCsrf, csrf);
    for (
      const [what, fields, headers] of [
        ["no CSRF token", {}, withCookie(cookie)],
        [
          "a wrong CSRF token",
          { csrf: csrf.slice(0, -1) + (csrf.endsWith("A") ? "B" : "A") },
          withCookie(cookie),
        ],
        ["another person's CSRF token", { csrf: bobsCsrf }, withCookie(cookie)],
        // A cross-site form post: SameSite=Lax keeps the cookie home, so none arrives.
        ["the right CSRF token but no cookie", { csrf }, {}],
        ["a stale cookie", { csrf }, withCookie("Z".repeat(43))],
      ] as const
    ) {
      const refused = await post(fields, headers);
      assert.equal(refused.status, 403, what);
      assert.equal(refused.headers.get("set-cookie"), null, `${what}: no cookie is touched`);
      assert.match(refused.headers.get("content-security-policy")!, /frame-ancestors 'none'/);
      assert.match(await refused.text(), /You were not signed out/, what);
      assert.equal(await signedIn(cookie), true, `${what}: the sign-in lives`);
    }

    const out = await agent.submitForm(new URL(`${setup.url}/logout`), page, {}, () => false);
    assert.equal(out.response.status, 200);
    assert.match(out.body, /You are signed out/);
    assert.match(out.response.headers.get("set-cookie")!, /^gatehouse_sso=; Path=\/; Max-Age=0/);
    assert.equal(agent.cookies(new URL(setup.url)).has("gatehouse_sso"), false);
    assert.equal(await signedIn(cookie), false, "the old cookie, replayed, is not signed in");
    const again = await (await fetch(`${setup.url}/logout`, { headers: withCookie(cookie) }))
      .text();
    assert.match(again, /You are not signed in/);
    assert.doesNotMatch(again, /name="csrf"/);
    const replayed = await post({ csrf }, withCookie(cookie));
    assert.equal(replayed.status, 403, "the old cookie and token cannot sign out twice");
    await replayed.body?.cancel();

    const idpVisits = () =>
      agent.visited.filter((u) => u.startsWith(`${setup.idp.issuer}/auth?`)).length;
    const visits = idpVisits();
    await obtainCode(agent, setup.url, client.client_id, `${setup.url}/alpha`);
    assert.equal(idpVisits(), visits + 1, "signing in again goes through the company login");
  } finally {
    await setup.close();
  }
});

Deno.test("metadata: RFC 8414 and RFC 9728 documents, their path forms, and client lookup", async () => {
  const setup = await startOAuthGateway();
  try {
    const as = await (await fetch(`${setup.url}/.well-known/oauth-authorization-server`)).json();
    assert.equal(as.issuer, setup.url);
    assert.deepEqual(as.response_types_supported, ["code"]);
    assert.deepEqual(as.grant_types_supported, ["authorization_code", "refresh_token"]);
    assert.deepEqual(as.code_challenge_methods_supported, ["S256"]);
    assert.ok(as.token_endpoint_auth_methods_supported.includes("none"));
    assert.equal(as.client_id_metadata_document_supported, true);
    assert.equal(as.jwks_uri, undefined);
    for (const path of ["alpha", "alpha/mcp", "alpha/sse"]) {
      const prm = await (await fetch(`${setup.url}/.well-known/oauth-protected-resource/${path}`))
        .json();
      assert.equal(prm.resource, `${setup.url}/alpha`);
      assert.deepEqual(prm.authorization_servers, [setup.url]);
      assert.deepEqual(prm.bearer_methods_supported, ["header"]);
      assert.equal(prm.resource_name, "alpha");
    }
    const missing = await fetch(`${setup.url}/.well-known/oauth-protected-resource/nothing`);
    assert.equal(missing.status, 404);
    await missing.body?.cancel();

    const confidential = await registerClient(setup.url, {
      token_endpoint_auth_method: "client_secret_basic",
    });
    assert.ok(confidential.client_secret);
    const lookup = await (await fetch(`${setup.url}/clients/${confidential.client_id}`)).json();
    assert.deepEqual(lookup.redirect_uris, [REDIRECT_URI]);
    assert.equal(lookup.token_endpoint_auth_method, "client_secret_basic");
    assert.equal(JSON.stringify(lookup).includes(confidential.client_secret!), false);
    assert.equal(lookup.client_secret, undefined);
    const unknown = await fetch(`${setup.url}/clients/gh_doesnotexistdoesnotexist`);
    assert.equal(unknown.status, 404);
    await unknown.body?.cancel();
  } finally {
    await setup.close();
  }
});

Deno.test("metadata: the gateway's base URL has an RFC 9728 document naming the gateway and its authorization server", async () => {
  const setup = await startOAuthGateway();
  try {
    const response = await fetch(`${setup.url}/.well-known/oauth-protected-resource`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("access-control-allow-origin"), "*");
    assert.deepEqual(await response.json(), {
      resource: setup.url,
      authorization_servers: [setup.url],
      bearer_methods_supported: ["header"],
      scopes_supported: ["mcp"],
      resource_name: "Gatehouse",
    });
    // The services' own documents are unchanged beside it.
    const alpha = await (await fetch(`${setup.url}/.well-known/oauth-protected-resource/alpha`))
      .json();
    assert.equal(alpha.resource, `${setup.url}/alpha`);
  } finally {
    await setup.close();
  }
  const based = await startOAuthGateway("", "/gw");
  try {
    const origin = new URL(based.url).origin;
    for (
      const path of [
        "/.well-known/oauth-protected-resource/gw",
        "/gw/.well-known/oauth-protected-resource",
      ]
    ) {
      const prm = await (await fetch(`${origin}${path}`)).json();
      assert.equal(prm.resource, `${origin}/gw`, path);
      assert.deepEqual(prm.authorization_servers, [`${origin}/gw`], path);
    }
  } finally {
    await based.close();
  }
});

Deno.test("without oauth: the OAuth endpoints answer 404; under a base path, the insertion form", async () => {
  const plain = await startGateway(`
servers:
  open: { transport: stdio, command: deno, env: { ${DENO_DIR_YAML} }, args: [--version], public: true }
`);
  try {
    for (
      const path of [
        "/.well-known/oauth-authorization-server",
        "/.well-known/oauth-protected-resource",
        "/register",
        "/authorize",
        "/token",
      ]
    ) {
      const response = await fetch(`${plain.url}${path}`, {
        method: path === "/register" || path === "/token" ? "POST" : "GET",
      });
      assert.equal(response.status, 404, path);
      await response.body?.cancel();
    }
  } finally {
    await plain.close();
  }
  const setup = await startOAuthGateway("", "/gw");
  try {
    const origin = new URL(setup.url).origin;
    const as = await (await fetch(`${origin}/.well-known/oauth-authorization-server/gw`)).json();
    assert.equal(as.issuer, `${origin}/gw`);
    assert.equal(as.token_endpoint, `${origin}/gw/token`);
    for (const path of ["/.well-known/oauth-authorization-server/gw", "/gw/token"]) {
      const preflight = await fetch(`${origin}${path}`, {
        method: "OPTIONS",
        headers: { origin: "http://localhost:6274", "access-control-request-method": "GET" },
      });
      await preflight.body?.cancel();
      assert.equal(preflight.status, 204, path);
      assert.equal(preflight.headers.get("access-control-allow-origin"), "*", path);
    }
    const prm = await (await fetch(`${origin}/.well-known/oauth-protected-resource/gw/alpha/mcp`))
      .json();
    assert.equal(prm.resource, `${origin}/gw/alpha`);
    const { client } = await connectWithOAuth(new UserAgent(), `${origin}/gw/alpha/mcp`);
    const result = await client.callTool({ name: "echo", arguments: { under: "a base path" } });
    assert.deepEqual(result.content, [{ type: "text", text: '{"under":"a base path"}' }]);
    await client.close();
  } finally {
    await setup.close();
  }
});
