/**
 * The login flow's steps in order, with real parts and a scripted identity provider
 * (tests/fixtures/login_flow.ts): the state's single use and browser binding, its lifetime on
 * the clock, the provider's failures, the access policy, and the pending authorization resumed
 * with its own client, redirect URI, PKCE challenge and resource.
 */
import assert from "node:assert/strict";
import {
  ALICE,
  APP_OTHER_REDIRECT,
  APP_REDIRECT,
  authorizeParams,
  ELSEWHERE,
  EXPIRED,
  ISSUER,
  LOGIN,
  shown,
  SSO,
  stateSentToIdp,
  TOOL_REDIRECT,
  VERIFIER,
  withLoginFlow,
} from "../../tests/fixtures/login_flow.ts";
import type { Identity } from "../core/identity.ts";
import { s256Challenge } from "../crypto/pkce.ts";
import { IdpError } from "../idp/provider.ts";

Deno.test("callback() refuses a replayed state with the expired page, without asking the provider again", async () => {
  await withLoginFlow(async (h) => {
    const clientId = await h.register([APP_REDIRECT]);
    const browser = h.browser();
    const state = stateSentToIdp(await h.authorize(browser, await authorizeParams(clientId)));
    const first = await h.callback(browser, state);
    assert.equal(first.status, 200, "the consent page");
    await first.body?.cancel();
    const replay = await h.callback(browser, state);
    assert.deepEqual(await shown(replay), EXPIRED);
    assert.equal(h.idp.finished.length, 1);
  });
});

Deno.test("callback() refuses a state returning to another browser, and spends it", async () => {
  await withLoginFlow(async (h) => {
    const clientId = await h.register([APP_REDIRECT]);
    const victim = h.browser();
    const state = stateSentToIdp(await h.authorize(victim, await authorizeParams(clientId)));
    // The attacker's browser has a login cookie of its own, from a login it started.
    const attacker = h.browser();
    stateSentToIdp(await h.authorize(attacker, await authorizeParams(clientId)));
    assert.ok(attacker.has(LOGIN));
    assert.notEqual(attacker.cookie(LOGIN), victim.cookie(LOGIN));
    assert.deepEqual(await shown(await h.callback(attacker, state)), ELSEWHERE);
    assert.equal(attacker.has(SSO), false);
    // Carried off once, the state is used up, even for the browser it belonged to.
    assert.deepEqual(await shown(await h.callback(victim, state)), EXPIRED);
    assert.equal(h.idp.finished.length, 0, "no code was exchanged");
  });
});

Deno.test("callback() refuses a state returning to a browser without the login cookie", async () => {
  await withLoginFlow(async (h) => {
    const clientId = await h.register([APP_REDIRECT]);
    const state = stateSentToIdp(await h.authorize(h.browser(), await authorizeParams(clientId)));
    assert.deepEqual(await shown(await h.callback(h.browser(), state)), ELSEWHERE);
  });
});

Deno.test("callback() accepts a login until authorizationRequestTtl has passed, then shows the expired page", async () => {
  await withLoginFlow(async (h) => {
    const clientId = await h.register([APP_REDIRECT]);
    const ttl = h.oauth.authorizationRequestTtlMs;

    const quick = h.browser();
    const inTime = stateSentToIdp(await h.authorize(quick, await authorizeParams(clientId)));
    h.clock.advance(ttl - 1);
    const consent = await h.callback(quick, inTime);
    assert.equal(consent.status, 200, "the consent page, 1 ms before the end");
    await consent.body?.cancel();

    const slow = h.browser();
    const late = stateSentToIdp(await h.authorize(slow, await authorizeParams(clientId)));
    h.clock.advance(ttl);
    assert.deepEqual(await shown(await h.callback(slow, late)), EXPIRED);
    assert.equal(h.idp.finished.length, 1, "the late callback never reached the provider");
  });
});

Deno.test("callback() shows the person the provider's message but no details when the login fails at the provider", async () => {
  await withLoginFlow(async (h) => {
    const clientId = await h.register([APP_REDIRECT]);
    for (
      const [code, status] of [["provider_error", 502], ["invalid_response", 502], [
        "login_refused",
        403,
      ]] as const
    ) {
      const browser = h.browser();
      const state = stateSentToIdp(await h.authorize(browser, await authorizeParams(clientId)));
      const failure = new IdpError(
        code,
        "The company login did not accept this sign-in. Try again, or ask your administrators.",
      );
      failure.cause = new Error("token endpoint said: invalid_client (secret idp-client-secret)");
      h.idp.failure = failure;
      h.logs.length = 0;
      const response = await h.callback(browser, state);
      const body = await response.clone().text();
      assert.deepEqual(await shown(response), {
        status,
        title: "Sign-in did not complete",
        text:
          "The company login did not accept this sign-in. Try again, or ask your administrators.",
      });
      for (const secret of ["invalid_client", "idp-client-secret", "idp-code-for-this-login"]) {
        assert.ok(!body.includes(secret), `the page does not show ${secret}`);
        assert.ok(!h.logs.join("\n").includes(secret), `the log does not show ${secret}`);
      }
      const warning = JSON.parse(h.logs.find((line) => line.includes('"warn"'))!);
      assert.equal(warning.msg, "login failed at the identity provider");
      assert.equal(warning.reason, code);
      assert.equal(browser.has(SSO), false);
    }
  });
});

Deno.test("callback() refuses a person the access policy does not admit, by domain or by address", async () => {
  await withLoginFlow(async (h) => {
    const clientId = await h.register([APP_REDIRECT]);
    const refused: [Identity, string][] = [
      [
        { subject: "oidc:mallory", email: "mallory@evil.example" },
        "mallory@evil.example is not permitted by this gateway&#39;s access policy; ask its administrators for access",
      ],
      [
        { subject: "oidc:bob", email: "bob@example.com", emailVerified: false },
        "the identity provider has not verified the address bob@example.com, so it cannot be admitted",
      ],
      [
        { subject: "oidc:carol", email: "carol@partner.org" },
        "carol@partner.org is not permitted by this gateway&#39;s access policy; ask its administrators for access",
      ],
    ];
    for (const [identity, reason] of refused) {
      h.idp.identity = identity;
      const browser = h.browser();
      const state = stateSentToIdp(await h.authorize(browser, await authorizeParams(clientId)));
      const response = await h.callback(browser, state);
      assert.equal(response.headers.get("location"), null, "no redirect to the client");
      assert.deepEqual(await shown(response), {
        status: 403,
        title: "Access not permitted",
        text: reason,
      });
      assert.equal(browser.has(SSO), false, `${identity.email} gets no sign-in`);
      assert.equal((await h.idpTokens.read(identity.subject)).tokens, undefined);
    }
    // The one listed address outside the domains is admitted.
    h.idp.identity = { subject: "oidc:contractor", email: "contractor@partner.org" };
    const browser = h.browser();
    const state = stateSentToIdp(await h.authorize(browser, await authorizeParams(clientId)));
    const consent = await h.callback(browser, state);
    assert.equal(consent.status, 200);
    assert.match(await consent.text(), /Allow <bdi>Test App<\/bdi> to use your tools\?/);
    assert.ok(browser.has(SSO));
    // The provider's tokens of this sign-in are kept (sealed) for asking about the person later.
    assert.deepEqual((await h.idpTokens.read("oidc:contractor")).tokens, h.idp.tokens);
  });
});

Deno.test("authorize() sends a signed-in person the policy no longer admits back to the provider", async () => {
  await withLoginFlow(async (h) => {
    const clientId = await h.register([APP_REDIRECT]);
    const browser = h.browser();
    const state = stateSentToIdp(await h.authorize(browser, await authorizeParams(clientId)));
    await (await h.callback(browser, state)).body?.cancel();
    assert.ok(browser.has(SSO));
    h.oauth.allow.domains = [];
    stateSentToIdp(await h.authorize(browser, await authorizeParams(clientId)));
  });
});

Deno.test("callback() resumes each pending authorization with its own client, redirect_uri, PKCE challenge and resource", async () => {
  await withLoginFlow(async (h) => {
    const app = await h.register([APP_REDIRECT, APP_OTHER_REDIRECT], "Test App");
    const tool = await h.register([TOOL_REDIRECT], "Other Tool");
    const appChallenge = await s256Challenge(VERIFIER);
    const toolChallenge = await s256Challenge("t".repeat(43));
    // Two authorizations wait at once, in two browsers of the same person.
    const first = h.browser();
    const second = h.browser();
    const appState = stateSentToIdp(
      await h.authorize(
        first,
        await authorizeParams(app, {
          redirect_uri: APP_OTHER_REDIRECT,
          state: "app-state",
          resource: `${ISSUER}/beta`,
        }),
      ),
    );
    const toolState = stateSentToIdp(
      await h.authorize(
        second,
        await authorizeParams(tool, {
          redirect_uri: TOOL_REDIRECT,
          state: "tool-state",
          code_challenge: toolChallenge,
          resource: `${ISSUER}/alpha/mcp`,
        }),
      ),
    );
    // They come back in the other order.
    const toolConsent = await h.callback(second, toolState);
    const appConsent = await h.callback(first, appState);
    const toolPage = await toolConsent.text();
    const appPage = await appConsent.text();
    assert.match(toolPage, /Allow <bdi>Other Tool<\/bdi> to use your tools\?/);
    assert.match(toolPage, /<li><code>alpha<\/code><\/li>/);
    assert.match(appPage, /Allow <bdi>Test App<\/bdi> to use your tools\?/);
    assert.match(appPage, /<li><code>beta<\/code><\/li>/);

    for (
      const [browser, page, clientId, redirectUri, state, challenge, audience] of [
        [first, appPage, app, APP_OTHER_REDIRECT, "app-state", appChallenge, `${ISSUER}/beta`],
        [second, toolPage, tool, TOOL_REDIRECT, "tool-state", toolChallenge, `${ISSUER}/alpha`],
      ] as const
    ) {
      const answer = await h.answerConsent(browser, page, "allow");
      assert.equal(answer.status, 302);
      const location = new URL(answer.headers.get("location")!);
      assert.equal(`${location.origin}${location.pathname}`, redirectUri);
      assert.deepEqual([...location.searchParams.keys()], ["code", "state", "iss"]);
      assert.equal(location.searchParams.get("state"), state);
      assert.equal(location.searchParams.get("iss"), ISSUER);
      const redeemed = await h.grants.redeemCode(location.searchParams.get("code")!);
      assert.ok(redeemed.ok);
      assert.deepEqual(
        {
          clientId: redeemed.record.clientId,
          redirectUri: redeemed.record.redirectUri,
          codeChallenge: redeemed.record.codeChallenge,
          audience: redeemed.record.audience,
          subject: redeemed.record.identity.subject,
          scope: redeemed.record.scope,
        },
        {
          clientId,
          redirectUri,
          codeChallenge: challenge,
          audience: [audience],
          subject: ALICE.subject,
          scope: "mcp",
        },
      );
    }
  });
});

Deno.test("callback() sends a person who already consented straight to the client, signed in, the login cookie cleared", async () => {
  await withLoginFlow(async (h) => {
    const clientId = await h.register([APP_REDIRECT]);
    const first = h.browser();
    const firstState = stateSentToIdp(await h.authorize(first, await authorizeParams(clientId)));
    const consent = await h.answerConsent(
      first,
      await (await h.callback(first, firstState)).text(),
      "allow",
    );
    assert.equal(consent.status, 302);

    const again = h.browser();
    const state = stateSentToIdp(
      await h.authorize(again, await authorizeParams(clientId, { state: "second-visit" })),
    );
    assert.ok(again.has(LOGIN));
    const response = await h.callback(again, state);
    assert.equal(response.status, 302);
    const location = new URL(response.headers.get("location")!);
    assert.equal(`${location.origin}${location.pathname}`, APP_REDIRECT);
    assert.equal(location.searchParams.get("state"), "second-visit");
    assert.ok(again.has(SSO));
    assert.equal(again.has(LOGIN), false);
  });
});

Deno.test("signIn() returns the person to the page that asked once they have logged in", async () => {
  await withLoginFlow(async (h) => {
    const browser = h.browser();
    const state = stateSentToIdp(browser.keep(await h.flow.signIn("/my/tokens?service=alpha")));
    const response = await h.callback(browser, state);
    assert.equal(response.status, 303);
    assert.equal(response.headers.get("location"), "/my/tokens?service=alpha");
    assert.equal(response.headers.get("cache-control"), "no-store");
    assert.ok(browser.has(SSO));
    assert.equal(browser.has(LOGIN), false);
  });
});

Deno.test("authorize() shows the errors of a client nobody vetted, naming where its link goes, and redirects nowhere by itself", async () => {
  await withLoginFlow(async (h) => {
    const clientId = await h.register(["https://evil.example/login-expired"], "Login Helper");
    const params = new URLSearchParams({ client_id: clientId, state: "s", response_type: "x" });
    const response = await h.authorize(h.browser(), params);
    assert.equal(response.status, 400);
    assert.equal(response.headers.get("location"), null, "no redirect before anyone clicks");
    const page = await response.text();
    assert.match(page, /only response_type=code is supported/);
    assert.match(page, /sent back to <code>https:\/\/evil\.example\/login-expired<\/code>/);
    const link = /<a class="button" href="([^"]*)" rel="noreferrer">Go to evil\.example<\/a>/
      .exec(page);
    assert.ok(link, page);
    const target = new URL(link[1].replaceAll("&amp;", "&"));
    assert.equal(target.origin + target.pathname, "https://evil.example/login-expired");
    assert.equal(target.searchParams.get("error"), "unsupported_response_type");
    assert.equal(target.searchParams.get("state"), "s");
  });
});
