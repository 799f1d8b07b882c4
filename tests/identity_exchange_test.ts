/**
 * `userToken.kind: exchange` with real parts: oidc-provider as the company IdP with a real
 * RFC 8693 grant (tests/fixtures/idp_exchange.ts) issuing audience-bound JWT access tokens, and
 * a backend that accepts only those, verified with the IdP's JWKS. The gateway's clock moves;
 * the IdP's runs as it does.
 */
import assert from "node:assert/strict";
import * as jose from "jose";
import { type TestClock, testClock } from "./fixtures/clock.ts";
import { listenForGateway, type TestGateway } from "./fixtures/gateway.ts";
import { startIdp, type TestIdp } from "./fixtures/idp.ts";
import { type ExchangePolicy, exchangePolicy, verifyAt } from "./fixtures/idp_exchange.ts";
import { type IdentityBackend, startIdentityBackend } from "./fixtures/identity_backend.ts";
import { exchangeCode, obtainCode, registerClient, token } from "./fixtures/oauth_raw.ts";
import { callTool2026 } from "./fixtures/raw.ts";
import { UserAgent } from "./fixtures/user_agent.ts";
import { idpSection } from "./fixtures/oauth_gateway.ts";
import { openKvStore } from "../src/store/kv.ts";
import { ENGINES, SHARED_ENGINES } from "./fixtures/stores.ts";
import type { Store } from "../src/store/store.ts";
import { KEYS } from "../src/store/keys.ts";

interface Setup {
  gw: TestGateway;
  idp: TestIdp;
  policy: ExchangePolicy;
  backend: IdentityBackend;
  clock: TestClock;
  store: Store;
  /** The configuration the gateway started with (to reload it changed). */
  yaml: string;
  /** A second replica on the same store and public URL, when asked for. */
  replica?: TestGateway;
}

async function withExchange(
  test: (s: Setup) => Promise<void>,
  options: {
    audiences?: string[];
    rotateRefreshTokens?: boolean;
    /** A second replica, on its own handle of a storage of this engine (ENGINES). */
    replicaOn?: string;
  } = {},
) {
  const policy = await exchangePolicy(options.audiences ?? ["ledger-api"]);
  const socket = await listenForGateway();
  const idp = await startIdp([`${socket.url}/oauth/callback`], {
    refreshTokens: true,
    rotateRefreshTokens: options.rotateRefreshTokens,
    exchange: policy,
  });
  const backend = await startIdentityBackend(verifyAt(idp.issuer, policy.audiences));
  const clock = testClock();
  const engine = ENGINES.find((one) => one.name === options.replicaOn);
  const opened = await engine?.open(clock);
  const store = opened?.store ?? await openKvStore(":memory:", { clock });
  let gw: TestGateway | undefined;
  let replica: TestGateway | undefined;
  const replicaSocket = opened ? await listenForGateway() : undefined;
  try {
    const yaml = `
baseUrl: http://127.0.0.1:{{PORT}}
servers:
  ledger:
    transport: streamable-http
    url: ${backend.url}
    requiresUserToken: true
    userToken: { kind: exchange, displayName: Ledger, audience: ledger-api, scopes: [ledger.read] }
  vault:
    transport: streamable-http
    url: ${backend.url}
    requiresUserToken: true
    userToken: { kind: exchange, displayName: Vault, audience: vault-api }
  books:
    transport: aggregate
    servers: [ledger, vault]
oauth:
  accessTokenTtl: 3h
${idpSection(idp)}
`;
    gw = await socket.start(yaml, { IDP_SECRET: idp.clientSecret }, { clock, store });
    // As behind a load balancer: the first's public URL, the same storage and clock.
    replica = await replicaSocket?.start(
      yaml.replaceAll("{{PORT}}", String(socket.port)),
      { IDP_SECRET: idp.clientSecret },
      { clock, store: opened?.other },
    );
    await test({ gw, idp, policy, backend, clock, store, yaml, replica });
  } finally {
    if (replica) await replica.close();
    else await replicaSocket?.close();
    if (gw) await gw.close();
    else await socket.close();
    await idp.close();
    await backend.close();
    if (opened) await opened.close();
    else store.close();
  }
}

async function signIn(s: Setup, email: string): Promise<string> {
  return (await signInWithRefresh(s, email)).access;
}

/** A sign-in's gateway tokens and the client they were issued to. */
async function signInWithRefresh(s: Setup, email: string) {
  s.idp.loginAs = { email };
  const client = await registerClient(s.gw.url);
  const code = (await obtainCode(new UserAgent(), s.gw.url, client.client_id, "", {
    resource: [`${s.gw.url}/ledger`, `${s.gw.url}/vault`, `${s.gw.url}/books`],
  })).get("code")!;
  const tokens = await exchangeCode(s.gw.url, client.client_id, code);
  assert.equal(tokens.status, 200, JSON.stringify(tokens.json));
  return {
    access: tokens.json.access_token,
    refresh: tokens.json.refresh_token,
    clientId: client.client_id,
  };
}

/** The gateway's refresh-token grant for the sign-in's client. */
function refresh(s: Setup, clientId: string, refreshToken: string) {
  return token(s.gw.url, {
    grant_type: "refresh_token",
    refresh_token: refreshToken,
    client_id: clientId,
  });
}

/** A 2026-07-28 `whoami` on `server`: the HTTP status and the JSON-RPC answer. */
async function whoami(
  s: Setup,
  token: string,
  server = "ledger",
  tool = "whoami",
  at = s.gw.url,
) {
  const response = await callTool2026(`${at}/${server}/mcp`, token, tool);
  const body = await response.json();
  return { status: response.status, body };
}

/** The bearer token the backend was sent, as the result of `whoami` shows it. */
function bearerOf(answer: { body: { result?: { content: { text: string }[] } } }): string {
  assert.ok(answer.body.result, JSON.stringify(answer.body));
  const told = JSON.parse(answer.body.result.content[0].text);
  return /^Bearer (\S+)$/.exec(told.authorization)![1];
}

Deno.test("kind: exchange: each person's backend token comes from the IdP's exchange, audience-bound, kept until shortly before it expires", async () => {
  await withExchange(async (s) => {
    const alice = await signIn(s, "alice@example.com");
    const bob = await signIn(s, "bob@example.com");
    const [a, b] = await Promise.all([whoami(s, alice), whoami(s, bob)]);
    const [ta, tb] = [bearerOf(a), bearerOf(b)];
    assert.equal(jose.decodeJwt(ta).sub, "alice-example-com");
    assert.equal(jose.decodeJwt(tb).sub, "bob-example-com");
    assert.equal(jose.decodeJwt(ta).aud, "ledger-api");
    assert.equal(jose.decodeJwt(ta).scope, "ledger.read");
    assert.equal(s.policy.last?.grant_type, "urn:ietf:params:oauth:grant-type:token-exchange");
    assert.equal(
      s.policy.last?.subject_token_type,
      "urn:ietf:params:oauth:token-type:access_token",
    );
    assert.equal(s.policy.issued, 2);
    // The backend refused nothing: every request carried a token the IdP's JWKS verifies.
    assert.deepEqual(s.backend.seen.filter((seen) => seen.method.endsWith("refused")), []);

    // Cached per person and backend: no new exchange for the next calls.
    assert.equal(bearerOf(await whoami(s, alice)), ta);
    assert.equal(s.policy.issued, 2);
    // Shortly before it expires (300 s, less the margin), a new one.
    s.clock.advance(280_000);
    const renewed = bearerOf(await whoami(s, alice));
    assert.notEqual(renewed, ta);
    assert.equal(s.policy.issued, 3);

    // The person's own IdP access token expired (an hour): refreshed at the IdP first.
    s.clock.advance(61 * 60_000);
    assert.equal(s.idp.grants.refresh_token ?? 0, 0);
    bearerOf(await whoami(s, alice));
    assert.equal(s.idp.grants.refresh_token, 1);
    assert.equal(s.policy.issued, 4);

    const issued = s.gw.logs.map((line) => JSON.parse(line))
      .filter((line) => line.event === "token_exchange" && line.outcome === "issued");
    assert.equal(issued.length, 4, "one audit line per token issued");
    // No token, the exchange's or the IdP's, is ever logged.
    const logs = s.gw.logs.join("\n");
    for (const token of [ta, tb, renewed]) assert.ok(!logs.includes(token.split(".")[2]));
  });
});

Deno.test("kind: exchange: the IdP's refusal is the person's error, not a 502; a sign-in kept from before asks to sign in again", async () => {
  await withExchange(async (s) => {
    const alice = await signIn(s, "alice@example.com");
    // vault-api is an audience the IdP does not issue: invalid_target.
    const refused = await whoami(s, alice, "vault");
    assert.equal(refused.status, 200, JSON.stringify(refused.body));
    assert.match(refused.body.error.message, /gave no Vault token for you \(.*invalid_target/);
    assert.match(refused.body.error.message, /you may not be allowed to use Vault/);
    assert.equal(refused.body.error.data.url, `${s.gw.url}/my/access`);

    // A person the IdP refuses for ledger-api.
    s.policy.refused.add("bob-example-com");
    const bob = await signIn(s, "bob@example.com");
    const bobs = await whoami(s, bob);
    assert.equal(bobs.status, 200);
    assert.match(bobs.body.error.message, /gave no Ledger token for you/);

    // A sign-in from before kind: exchange kept no IdP tokens: sign in again.
    await s.store.delete(KEYS.idpTokens("oidc:alice-example-com"));
    const carol = await whoami(s, alice);
    assert.equal(carol.status, 200);
    assert.match(carol.body.error.message, /Ledger needs your company sign-in .*sign in again/);
  });
});

Deno.test("kind: exchange: an IdP that is down gives a retryable error, and the log says so", async () => {
  await withExchange(async (s) => {
    const alice = await signIn(s, "alice@example.com");
    s.idp.down = true;
    const down = await whoami(s, alice);
    const message = down.body.error.message as string;
    assert.match(message, /could not be asked for your Ledger token \(unreachable\); try again/);
    assert.ok(
      s.gw.logs.some((line) =>
        line.includes("token exchange failed: the identity provider could not be asked")
      ),
    );
    // The audit trail says so, naming the person, the server and the audience.
    const audits = s.gw.logs.map((line) => JSON.parse(line))
      .filter((line) => line.msg === "audit" && line.event === "token_exchange");
    assert.deepEqual(
      audits.map(({ server, user, audience, outcome }) => ({ server, user, audience, outcome })),
      [{
        server: "ledger",
        user: "oidc:alice-example-com",
        audience: "ledger-api",
        outcome: "unavailable",
      }],
    );
    s.idp.down = false;
    bearerOf(await whoami(s, alice));
  });
});

Deno.test("kind: exchange: two backends needing the person's expired IdP token at once refresh it once, so an IdP that rotates refresh tokens keeps the sign-in", async () => {
  await withExchange(async (s) => {
    const alice = await signIn(s, "alice@example.com");
    s.clock.advance(61 * 60_000);
    // Both backends' exchanges find the IdP access token expired at the same instant. A refresh
    // token used twice is reuse to an IdP that rotates them: it refuses and revokes the grant.
    const [ledger, vault] = await Promise.all([whoami(s, alice), whoami(s, alice, "vault")]);
    assert.equal(jose.decodeJwt(bearerOf(ledger)).aud, "ledger-api");
    assert.equal(jose.decodeJwt(bearerOf(vault)).aud, "vault-api");
    assert.equal(s.idp.grants.refresh_token, 1);
    // The refreshed tokens were kept: the next hour's refresh works too.
    s.clock.advance(61 * 60_000);
    bearerOf(await whoami(s, alice));
    assert.equal(s.idp.grants.refresh_token, 2);
  }, { audiences: ["ledger-api", "vault-api"], rotateRefreshTokens: true });
});

for (const engine of SHARED_ENGINES) {
  Deno.test(`kind: exchange on two replicas (${engine}): both needing the person's expired IdP token at once refresh it one after the other, so an IdP that rotates refresh tokens keeps the sign-in`, async () => {
    await withExchange(async (s) => {
      const alice = await signIn(s, "alice@example.com");
      s.clock.advance(61 * 60_000);
      // Each replica's exchange finds the IdP access token expired at the same instant; without
      // a hold across replicas both present the same refresh token, and the IdP revokes the grant.
      const [here, there] = await Promise.all([
        whoami(s, alice),
        whoami(s, alice, "vault", "whoami", s.replica!.url),
      ]);
      assert.equal(jose.decodeJwt(bearerOf(here)).aud, "ledger-api");
      assert.equal(jose.decodeJwt(bearerOf(there)).aud, "vault-api");
      // The second found the first's refreshed token and used it.
      assert.equal(s.idp.grants.refresh_token, 1);
      // The refresh token the IdP rotated in is the one kept: the next hour's refresh works on
      // either replica.
      s.clock.advance(61 * 60_000);
      bearerOf(await whoami(s, alice, "ledger", "whoami", s.replica!.url));
      assert.equal(s.idp.grants.refresh_token, 2);
      bearerOf(await whoami(s, alice, "vault"));
    }, { audiences: ["ledger-api", "vault-api"], rotateRefreshTokens: true, replicaOn: engine });
  });

  Deno.test(`kind: exchange on two replicas (${engine}): a token refresh on one and a tool call on the other, both needing the person's expired IdP token, keep the sign-in`, async () => {
    await withExchange(async (s) => {
      const alice = await signInWithRefresh(s, "alice@example.com");
      // The groups are due to be read again (groupsMaxAge) on the first replica as the second's
      // exchange finds the IdP access token expired.
      s.clock.advance(61 * 60_000);
      const [refreshed, call] = await Promise.all([
        refresh(s, alice.clientId, alice.refresh),
        whoami(s, alice.access, "ledger", "whoami", s.replica!.url),
      ]);
      assert.equal(refreshed.status, 200, JSON.stringify(refreshed.json));
      bearerOf(call);
      s.clock.advance(61 * 60_000);
      const again = await refresh(s, alice.clientId, refreshed.json.refresh_token);
      assert.equal(again.status, 200, JSON.stringify(again.json));
      bearerOf(await whoami(s, again.json.access_token, "ledger", "whoami", s.replica!.url));
    }, { rotateRefreshTokens: true, replicaOn: engine });
  });
}

Deno.test("kind: exchange: after a reload names another audience, the backend gets a token for that audience, not the one kept for the last", async () => {
  await withExchange(async (s) => {
    const alice = await signIn(s, "alice@example.com");
    assert.equal(jose.decodeJwt(bearerOf(await whoami(s, alice))).aud, "ledger-api");
    await s.gw.reload(s.yaml.replace("audience: ledger-api", "audience: vault-api"), {
      IDP_SECRET: s.idp.clientSecret,
    });
    assert.equal(jose.decodeJwt(bearerOf(await whoami(s, alice))).aud, "vault-api");
  }, { audiences: ["ledger-api", "vault-api"] });
});

Deno.test("kind: exchange through an aggregate: each member's backend gets the token for its own audience, for the person calling", async () => {
  await withExchange(async (s) => {
    const alice = await signIn(s, "alice@example.com");
    const bob = await signIn(s, "bob@example.com");
    const calls = await Promise.all([
      whoami(s, alice, "books", "ledger.whoami"),
      whoami(s, alice, "books", "vault.whoami"),
      whoami(s, bob, "books", "vault.whoami"),
      whoami(s, bob, "books", "ledger.whoami"),
    ]);
    const told = calls.map((call) => jose.decodeJwt(bearerOf(call)));
    assert.deepEqual(told.map(({ sub, aud }) => [sub, aud]), [
      ["alice-example-com", "ledger-api"],
      ["alice-example-com", "vault-api"],
      ["bob-example-com", "vault-api"],
      ["bob-example-com", "ledger-api"],
    ]);
  }, { audiences: ["ledger-api", "vault-api"] });
});

Deno.test("kind: exchange: a tool call and a token refresh that both need the person's expired IdP token use its refresh token one after the other", async () => {
  await withExchange(async (s) => {
    const alice = await signInWithRefresh(s, "alice@example.com");
    // The groups are due to be read again (groupsMaxAge) as the IdP access token has expired.
    s.clock.advance(61 * 60_000);
    const [refreshed, call] = await Promise.all([
      refresh(s, alice.clientId, alice.refresh),
      whoami(s, alice.access),
    ]);
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.json));
    bearerOf(call);
    // Neither used the IdP refresh token the other had already spent: the sign-in lives on.
    s.clock.advance(61 * 60_000);
    const again = await refresh(s, alice.clientId, refreshed.json.refresh_token);
    assert.equal(again.status, 200, JSON.stringify(again.json));
    bearerOf(await whoami(s, again.json.access_token));
  }, { rotateRefreshTokens: true });
});

Deno.test("kind: exchange: an IdP refusal that echoes the person's own token, or runs long, reaches neither the person nor the logs as sent", async () => {
  await withExchange(async (s) => {
    s.policy.refused.add("alice-example-com");
    s.policy.refusal = (params) =>
      `subject_token ${params.subject_token} is refused ${"!".repeat(5000)}`;
    const alice = await signIn(s, "alice@example.com");
    const refused = await whoami(s, alice);
    const subjectToken = s.policy.last!.subject_token!;
    const message = refused.body.error.message as string;
    assert.match(message, /gave no Ledger token for you \(.*invalid_target/);
    assert.ok(!message.includes(subjectToken), message);
    assert.ok(message.length < 1000, `${message.length} characters`);
    assert.ok(!s.gw.logs.join("\n").includes(subjectToken), "the IdP token is in the logs");
  });
});
