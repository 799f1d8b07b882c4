import assert from "node:assert/strict";
import { testClock } from "../../tests/fixtures/clock.ts";
import type { Identity } from "../core/identity.ts";
import { parseClientId } from "../core/ids.ts";
import { Secret } from "../core/secret.ts";
import { deriveHmacKey } from "../crypto/keys.ts";
import type { AuthorizationRequest } from "../oauth/authorize.ts";
import { GrantStore } from "../oauth/grants.ts";
import { createLogger } from "../observability/logger.ts";
import { openKvStore } from "../store/kv.ts";
import { AuthorizationCompletion, type ServerRefusal } from "./authorization_completion.ts";
import { cookiePolicy } from "./cookies.ts";
import { PendingAuthorizations } from "./pending_authorizations.ts";
import { type SsoSession, SsoSessions } from "./sso.ts";

const ISSUER = "https://gw.example.com";
const ALICE: Identity = { subject: "oidc:alice", email: "alice@example.com" };
const BOB: Identity = { subject: "oidc:bob", email: "bob@example.com" };
const REQUEST: AuthorizationRequest = {
  clientId: parseClientId("gh_testclient0123456789ab")!,
  clientName: "Test App",
  redirectUri: "https://app.example.com/callback",
  state: "client-state",
  codeChallenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
  audience: [`${ISSUER}/alpha`],
  scope: "mcp",
};

interface Parts {
  completion: AuthorizationCompletion;
  pending: PendingAuthorizations;
  grants: GrantStore;
  /** What `credentialsMissing` answers. */
  missing: string[];
  /** What `checkServerAccess` answers: a server's `access:` refusing everyone, or none. */
  refusal?: ServerRefusal;
  signIn(identity: Identity): Promise<{ session: SsoSession; cookie: string }>;
  /** A new pending authorization for REQUEST (or `request`), saved; its id. */
  waiting(request?: AuthorizationRequest): Promise<string>;
  /** POST /authorize/consent as `cookie`'s browser. */
  answer(cookie: string, form: Record<string, string>): Promise<Response>;
}

async function withCompletion(test: (parts: Parts) => Promise<void>): Promise<void> {
  const clock = testClock();
  clock.freeze();
  const store = await openKvStore(":memory:");
  const logger = createLogger("error", () => {});
  const grants = new GrantStore(store, clock, {
    codeMs: 60_000,
    refreshMs: 60 * 60_000,
    accessMs: 5 * 60_000,
  });
  const sso = new SsoSessions({
    store,
    clock,
    ttlMs: 60 * 60_000,
    cookies: cookiePolicy(ISSUER),
    csrfKey: await deriveHmacKey(new Secret("completion-test-secret-0123456789-abcdef"), "csrf"),
  });
  const pending = new PendingAuthorizations(store, clock);
  const parts: Parts = {
    completion: new AuthorizationCompletion({
      issuer: ISSUER,
      basePath: "",
      store,
      clock,
      logger,
      grants,
      sso,
      pending,
      credentialsMissing: () => Promise.resolve(parts.missing),
      checkServerAccess: () => parts.refusal,
    }),
    pending,
    grants,
    missing: [],
    signIn: async (identity) => {
      const { session, cookie } = await sso.create(identity);
      return { session, cookie: cookie.split(";")[0] };
    },
    waiting: async (request = REQUEST) => {
      const id = pending.newId();
      await pending.save(id, { request, expiresAt: clock.now() + 60_000 });
      return id;
    },
    answer: async (cookie, fields) => {
      const form = new URLSearchParams(fields);
      const request = new Request(`${ISSUER}/authorize/consent`, {
        method: "POST",
        headers: { cookie },
        body: form,
      });
      return await parts.completion.consent(request, form);
    },
  };
  try {
    await test(parts);
  } finally {
    store.close();
  }
}

/** Signs `identity` in and shows them the consent page for a new pending authorization. */
async function askConsent(parts: Parts, identity: Identity, request = REQUEST) {
  const { session, cookie } = await parts.signIn(identity);
  const id = await parts.waiting(request);
  const page = await parts.completion.afterLogin(session, id, (await parts.pending.peek(id))!, []);
  assert.equal(page.status, 200);
  const body = await page.text();
  const csrf = /name="csrf" value="([^"]*)"/.exec(body)![1];
  assert.match(body, new RegExp(`name="request" value="${id}"`));
  return { id, cookie, csrf, session };
}

async function titleOf(response: Response): Promise<[number, string]> {
  const title = /<h1>(.*?)<\/h1>/.exec(await response.text())?.[1] ?? "";
  return [response.status, title.replace(/<\/?bdi>/g, "")];
}

function codeIn(response: Response): URLSearchParams {
  assert.equal(response.status, 302);
  const location = new URL(response.headers.get("location")!);
  assert.equal(`${location.origin}${location.pathname}`, REQUEST.redirectUri);
  return location.searchParams;
}

Deno.test("afterLogin() asks consent once per client and services, then issues the code at once", async () => {
  await withCompletion(async (parts) => {
    const asked = await askConsent(parts, ALICE);
    codeIn(
      await parts.answer(asked.cookie, { csrf: asked.csrf, request: asked.id, decision: "allow" }),
    );
    // The same client for the same service: no page.
    const again = await parts.waiting();
    const direct = await parts.completion.afterLogin(
      asked.session,
      again,
      (await parts.pending.peek(again))!,
      ["extra=cookie"],
    );
    assert.equal(codeIn(direct).get("state"), "client-state");
    assert.equal(direct.headers.get("set-cookie"), "extra=cookie");
    // A service it was not granted: asked again.
    const wider = { ...REQUEST, audience: [`${ISSUER}/alpha`, `${ISSUER}/beta`] };
    const widerId = await parts.waiting(wider);
    const page = await parts.completion.afterLogin(
      asked.session,
      widerId,
      (await parts.pending.peek(widerId))!,
      [],
    );
    assert.deepEqual(await titleOf(page), [200, "Allow Test App to use your tools?"]);
  });
});

Deno.test("consent() sends access_denied with the client's state when the person declines", async () => {
  await withCompletion(async (parts) => {
    const asked = await askConsent(parts, ALICE);
    const response = await parts.answer(asked.cookie, {
      csrf: asked.csrf,
      request: asked.id,
      decision: "deny",
    });
    assert.equal(response.status, 302);
    assert.equal(
      response.headers.get("location"),
      "https://app.example.com/callback?error=access_denied&error_description=the+person+declined+to+grant+access&state=client-state&iss=https%3A%2F%2Fgw.example.com",
    );
  });
});

Deno.test("consent() refuses a form without this session's CSRF token and leaves the request waiting", async () => {
  await withCompletion(async (parts) => {
    const asked = await askConsent(parts, ALICE);
    const bob = await parts.signIn(BOB);
    for (const [cookie, csrf] of [[asked.cookie, "forged"], [bob.cookie, asked.csrf]]) {
      const refused = await parts.answer(cookie, { csrf, request: asked.id, decision: "allow" });
      assert.deepEqual(await titleOf(refused), [403, "This form has expired"]);
    }
    codeIn(
      await parts.answer(asked.cookie, { csrf: asked.csrf, request: asked.id, decision: "allow" }),
    );
  });
});

Deno.test("consent() refuses an answer from someone other than the person asked and leaves the request to its person", async () => {
  await withCompletion(async (parts) => {
    const asked = await askConsent(parts, ALICE);
    const bob = await askConsent(parts, BOB);
    for (const decision of ["allow", "deny"]) {
      const response = await parts.answer(bob.cookie, {
        csrf: bob.csrf,
        request: asked.id,
        decision,
      });
      assert.deepEqual(await titleOf(response), [400, "This request has expired"]);
    }
    codeIn(
      await parts.answer(asked.cookie, { csrf: asked.csrf, request: asked.id, decision: "allow" }),
    );
  });
});

Deno.test("consent() holds the code for the services step when a credential is missing; complete() gives it to its own person only", async () => {
  await withCompletion(async (parts) => {
    parts.missing = ["alpha"];
    const asked = await askConsent(parts, ALICE);
    const held = await parts.answer(asked.cookie, {
      csrf: asked.csrf,
      request: asked.id,
      decision: "allow",
    });
    assert.equal(held.status, 303);
    assert.equal(held.headers.get("location"), `/oauth/services?request=${asked.id}`);

    const bob = await parts.signIn(BOB);
    assert.equal(await parts.completion.awaitingServices(bob.session, asked.id), undefined);
    assert.deepEqual(await parts.completion.awaitingServices(asked.session, asked.id), {
      id: asked.id,
      clientName: "Test App",
      services: ["alpha"],
    });
    const complete = (cookie: string) =>
      parts.completion.complete(
        new Request(`${ISSUER}/oauth/complete?request=${asked.id}`, { headers: { cookie } }),
      );
    assert.deepEqual(await titleOf(await complete(bob.cookie)), [400, "This request has expired"]);
    const code = codeIn(await complete(asked.cookie)).get("code")!;
    const redeemed = await parts.grants.redeemCode(code);
    assert.ok(redeemed.ok);
    assert.equal(redeemed.record.identity.subject, ALICE.subject);
    assert.deepEqual(await titleOf(await complete(asked.cookie)), [
      400,
      "This request has expired",
    ]);
  });
});

const REFUSED: ServerRefusal = {
  server: "beta",
  reason:
    'alice@example.com may not use the server "beta"; ask the gateway\'s administrators for access',
};

/** The refusal page's heading, what it says, and where its link goes. */
async function refusalOf(response: Response) {
  const body = await response.text();
  return {
    status: response.status,
    title: /<h1>([^<]*)<\/h1>/.exec(body)?.[1],
    says: [...body.matchAll(/<p>((?:[^<]|<\/?bdi>)*)<\/p>/g)].map((match) =>
      match[1].replace(/<\/?bdi>/g, "")
    ),
    link: /<a class="button primary" href="([^"]*)">/.exec(body)?.[1].replaceAll("&amp;", "&"),
  };
}

Deno.test("afterLogin() issues no code for a server whose access refuses the person, and shows why", async () => {
  await withCompletion(async (parts) => {
    parts.refusal = REFUSED;
    const { session } = await parts.signIn(ALICE);
    const both = { ...REQUEST, audience: [`${ISSUER}/alpha`, `${ISSUER}/beta`] };
    const id = await parts.waiting(both);
    const response = await parts.completion.afterLogin(
      session,
      id,
      (await parts.pending.peek(id))!,
      ["sso=kept"],
    );
    assert.equal(response.headers.get("set-cookie"), "sso=kept");
    assert.deepEqual(await refusalOf(response), {
      status: 403,
      title: "You may not use “beta”",
      says: [
        "alice@example.com may not use the server “beta” on this gateway, so Test App was not given access to it.",
        "It asked for alpha, beta; since you may not use one of them, it was given none.",
        "If you need it, ask the gateway's administrators for access to “beta”.",
      ],
      link:
        "https://app.example.com/callback?error=access_denied&error_description=alice%40example.com+may+not+use+the+server+%22beta%22%3B+ask+the+gateway%27s+administrators+for+access&state=client-state&iss=https%3A%2F%2Fgw.example.com",
    });
  });
});

Deno.test("consent() issues no code when a server's access changed while the person was asked", async () => {
  await withCompletion(async (parts) => {
    const asked = await askConsent(parts, ALICE);
    // As a configuration reload between the consent page and its answer would.
    parts.refusal = REFUSED;
    const response = await parts.answer(asked.cookie, {
      csrf: asked.csrf,
      request: asked.id,
      decision: "allow",
    });
    const refusal = await refusalOf(response);
    assert.equal(refusal.status, 403);
    assert.equal(new URL(refusal.link!).searchParams.get("error"), "access_denied");
    assert.equal(new URL(refusal.link!).searchParams.get("code"), null);
  });
});
