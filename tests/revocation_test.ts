/**
 * Revocation as clients and replicas see it: POST /revoke (RFC 7009) over HTTP, the metadata
 * that advertises it, a revoked grant's access tokens refused and its MCP sessions ended, and
 * two replicas on one KV file or one PostgreSQL database, where a revocation on one reaches the
 * other within 10 seconds.
 */
import assert from "node:assert/strict";
import { SHARED_ENGINES, sharedStorage } from "./fixtures/stores.ts";
import { type GatewaySocket, listenForGateway, type TestGateway } from "./fixtures/gateway.ts";
import { startIdp, type TestIdp } from "./fixtures/idp.ts";
import { startOAuthGateway, TEST_MASTER_SECRET } from "./fixtures/oauth_gateway.ts";
import { exchangeCode, obtainCode, register, registerClient, token } from "./fixtures/oauth_raw.ts";
import { mcpHeaders, openSession, post } from "./fixtures/raw.ts";
import { UserAgent } from "./fixtures/user_agent.ts";
import { waitUntil } from "./fixtures/waits.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const REVOKED = /this grant was revoked: sign in again through your MCP client/;

interface Tokens {
  clientId: string;
  access: string;
  refresh: string;
}

/** A new public client, and the tokens `agent`'s person grants it for `server`. */
async function signIn(base: string, agent: UserAgent, server = "alpha"): Promise<Tokens> {
  const client = await registerClient(base);
  const code = (await obtainCode(agent, base, client.client_id, `${base}/${server}`)).get("code")!;
  const tokens = (await exchangeCode(base, client.client_id, code)).json;
  return { clientId: client.client_id, access: tokens.access_token, refresh: tokens.refresh_token };
}

async function revoke(
  base: string,
  form: Record<string, string>,
  headers: Record<string, string> = {},
) {
  const response = await fetch(`${base}/revoke`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(form),
  });
  return { status: response.status, headers: response.headers, json: await response.json() };
}

/** A tools/list in session `session` with `access`: the status, and the refusal if any. */
async function call(base: string, access: string, session?: string) {
  const answer = await post(
    `${base}/alpha/mcp`,
    { jsonrpc: "2.0", id: 7, method: "tools/list" },
    mcpHeaders({
      authorization: `Bearer ${access}`,
      ...(session ? { "mcp-session-id": session } : {}),
    }),
  );
  return { status: answer.status, challenge: answer.headers.get("www-authenticate") ?? "" };
}

Deno.test("POST /revoke ends a grant: its tokens are refused, its MCP session ends, and the metadata names the endpoint", async (t) => {
  const setup = await startOAuthGateway();
  const base = setup.url;
  try {
    await t.step(
      "the authorization server metadata advertises the revocation endpoint",
      async () => {
        const metadata = await (await fetch(`${base}/.well-known/oauth-authorization-server`))
          .json();
        assert.equal(metadata.revocation_endpoint, `${base}/revoke`);
        assert.deepEqual(metadata.revocation_endpoint_auth_methods_supported, [
          "none",
          "client_secret_post",
          "client_secret_basic",
          "private_key_jwt",
        ]);
      },
    );

    const agent = new UserAgent();
    const grant = await signIn(base, agent);
    const session = await openSession(`${base}/alpha/mcp`, {
      authorization: `Bearer ${grant.access}`,
    });
    assert.equal((await call(base, grant.access, session)).status, 200);

    await t.step("an access token revoked by its client stops working at once here", async () => {
      const answer = await revoke(base, { client_id: grant.clientId, token: grant.access });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get("cache-control"), "no-store");
      const refused = await call(base, grant.access, session);
      assert.equal(refused.status, 401);
      assert.match(refused.challenge, /error="invalid_token"/);
      assert.match(refused.challenge, REVOKED);
      const refresh = await token(base, {
        grant_type: "refresh_token",
        client_id: grant.clientId,
        refresh_token: grant.refresh,
      });
      assert.equal(refresh.status, 400);
      assert.equal(refresh.json.error, "invalid_grant");
    });

    await t.step(
      "the session opened with it has ended: a new grant of the same person gets 404 on it",
      async () => {
        const again = await signIn(base, agent);
        await waitUntil(
          "the revoked grant's session to end",
          () => !setup.gw.gateway.sessions.get(session as never),
        );
        const answer = await call(base, again.access, session);
        assert.equal(answer.status, 404);
      },
    );

    await t.step(
      "a refresh token ends its whole grant; unknown tokens and other clients' get 200 and change nothing",
      async () => {
        const grant2 = await signIn(base, agent);
        const session2 = await openSession(`${base}/alpha/mcp`, {
          authorization: `Bearer ${grant2.access}`,
        });
        const other = await registerClient(base);
        for (const tokenValue of [grant2.refresh, grant2.access, "garbage", "a.b.c"]) {
          assert.equal(
            (await revoke(base, { client_id: other.client_id, token: tokenValue })).status,
            200,
          );
        }
        assert.equal((await call(base, grant2.access, session2)).status, 200);
        assert.equal(
          (await revoke(base, {
            client_id: grant2.clientId,
            token: grant2.refresh,
            token_type_hint: "refresh_token",
          })).status,
          200,
        );
        assert.match((await call(base, grant2.access, session2)).challenge, REVOKED);
      },
    );

    await t.step(
      "errors as RFC 7009 §2.2.1: invalid_client 401, unsupported_token_type 400, JSON and no-store",
      async () => {
        const { json: confidential } = await register(base, {
          token_endpoint_auth_method: "client_secret_basic",
        });
        const basic = `Basic ${btoa(`${confidential.client_id}:wrong-secret`)}`;
        const refused = await revoke(base, { token: "x" }, { authorization: basic });
        assert.equal(refused.status, 401);
        assert.equal(refused.json.error, "invalid_client");
        assert.equal(refused.headers.get("cache-control"), "no-store");
        assert.match(refused.headers.get("www-authenticate") ?? "", /^Basic/);
        const good = `Basic ${btoa(`${confidential.client_id}:${confidential.client_secret}`)}`;
        assert.equal((await revoke(base, { token: "x" }, { authorization: good })).status, 200);
        const hint = await revoke(base, { token: "x", token_type_hint: "id_token" }, {
          authorization: good,
        });
        assert.equal(hint.status, 400);
        assert.equal(hint.json.error, "unsupported_token_type");
        const unknown = await revoke(base, {
          client_id: "gh_nobody0000000000000000000",
          token: "x",
        });
        assert.equal(unknown.status, 401);
      },
    );
  } finally {
    await setup.close();
  }
});

/** Two replicas as in production: one base URL and secret, one KV file, each its own handle. */
async function twoReplicas(idp: TestIdp, a: GatewaySocket, b: GatewaySocket, storage: string) {
  const yaml = `
baseUrl: ${a.url}
storage: ${storage}
secret: ${TEST_MASTER_SECRET}
servers:
  alpha:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts"]
oauth:
  idp: { provider: oidc, issuer: "${idp.issuer}", clientId: ${idp.clientId}, clientSecret: "${idp.clientSecret}" }
  allow: { domains: [example.com] }
`;
  const replicas: TestGateway[] = [];
  replicas.push(await a.start(yaml, {}, { storage }));
  replicas.push(await b.start(yaml, {}, { storage }));
  return replicas;
}

for (const engine of SHARED_ENGINES) {
  Deno.test(`two replicas on one storage (${engine}): a grant revoked on one is refused on the other within 10 seconds, and its session there ends`, async () => {
    const shared = await sharedStorage(engine);
    const a = await listenForGateway();
    const b = await listenForGateway();
    const idp = await startIdp([`${a.url}/oauth/callback`]);
    const [gwA, gwB] = await twoReplicas(idp, a, b, shared.storage);
    try {
      const agent = new UserAgent();
      const grant = await signIn(a.url, agent);
      const onB = await openSession(`${b.url}/alpha/mcp`, {
        authorization: `Bearer ${grant.access}`,
      });
      assert.equal((await call(b.url, grant.access, onB)).status, 200);

      const revokedAt = performance.now();
      assert.equal(
        (await revoke(a.url, { client_id: grant.clientId, token: grant.refresh })).status,
        200,
      );
      assert.match(
        (await call(a.url, grant.access)).challenge,
        REVOKED,
        "at once where it was revoked",
      );
      await waitUntil(
        "replica B to refuse the revoked grant's token",
        async () => (await call(b.url, grant.access, onB)).status === 401,
        { ms: 10_000, every: 50 },
      );
      const elapsed = performance.now() - revokedAt;
      console.log(`revoke on A → refused on B after ${elapsed.toFixed(0)} ms (poll every 2 s)`);
      assert.match((await call(b.url, grant.access, onB)).challenge, REVOKED);
      await waitUntil("B to end the session", () => !gwB.gateway.sessions.get(onB as never), {
        ms: 10_000,
      });
      const again = await signIn(a.url, agent);
      assert.equal((await call(b.url, again.access, onB)).status, 404);
      const fresh = await openSession(`${b.url}/alpha/mcp`, {
        authorization: `Bearer ${again.access}`,
      });
      assert.equal((await call(b.url, again.access, fresh)).status, 200, "a new grant works");
    } finally {
      await gwA.close();
      await gwB.close();
      await idp.close();
      await shared.cleanup();
    }
  });
}
