/**
 * Clients, grants and tokens survive a restart on the same storage, and a master-secret
 * rotation keeps old tokens valid while the old secret is listed under previousSecrets.
 */
import assert from "node:assert/strict";
import { startGateway } from "./fixtures/gateway.ts";
import { startIdp } from "./fixtures/idp.ts";
import { exchangeCode, obtainCode, registerClient, token } from "./fixtures/oauth_raw.ts";
import { startRelay } from "./fixtures/ports.ts";
import { INIT, mcpHeaders, post } from "./fixtures/raw.ts";
import { UserAgent } from "./fixtures/user_agent.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const OLD = "old-master-secret-0123456789-abcdefghijklmnop";
const NEW = "new-master-secret-0123456789-abcdefghijklmnop";

Deno.test("restart with a rotated secret: old tokens verify via previousSecrets, refresh continues", async () => {
  // Each start gets a port of its own; the relay keeps one address (baseUrl, audiences) for all.
  const relay = startRelay();
  const idp = await startIdp([`${relay.url}/oauth/callback`]);
  const dir = await Deno.makeTempDir();
  const config = (secrets: string) => `
baseUrl: ${relay.url}
${secrets}
servers:
  alpha: { transport: stdio, command: deno, env: { ${DENO_DIR_YAML} }, args: [run, "${ROOT}tests/fixtures/minimal_server.ts"] }
oauth:
  idp: { provider: oidc, issuer: "${idp.issuer}", clientId: ${idp.clientId}, clientSecret: "${idp.clientSecret}" }
  allow: { domains: [example.com] }
`;
  const start = async (secrets: string) => {
    const gw = await startGateway(config(secrets), {}, { storage: `${dir}/gatehouse.kv` });
    relay.forwardTo(Number(new URL(gw.url).port));
    return { ...gw, url: relay.url };
  };
  const call = (url: string, accessToken: string) =>
    post(`${url}/alpha/mcp`, INIT, mcpHeaders({ authorization: `Bearer ${accessToken}` }));
  try {
    const first = await start(`secret: ${OLD}`);
    const client = await registerClient(first.url);
    const code =
      (await obtainCode(new UserAgent(), first.url, client.client_id, `${first.url}/alpha`))
        .get("code")!;
    const tokens = (await exchangeCode(first.url, client.client_id, code)).json;
    await first.close();

    const rotated = await start(`secret: ${NEW}\npreviousSecrets: ["${OLD}"]`);
    try {
      assert.equal((await call(rotated.url, tokens.access_token)).status, 200);
      const refreshed = await token(rotated.url, {
        grant_type: "refresh_token",
        client_id: client.client_id,
        refresh_token: tokens.refresh_token,
      });
      assert.equal(refreshed.status, 200, JSON.stringify(refreshed.json));
      tokens.access_token_new = refreshed.json.access_token;
    } finally {
      await rotated.close();
    }

    const dropped = await start(`secret: ${NEW}`);
    try {
      const old = await call(dropped.url, tokens.access_token);
      assert.equal(old.status, 401);
      assert.match(old.headers.get("www-authenticate")!, /signature is invalid/);
      assert.equal((await call(dropped.url, tokens.access_token_new)).status, 200);
    } finally {
      await dropped.close();
    }
  } finally {
    await relay.close();
    await idp.close();
    await Deno.remove(dir, { recursive: true });
  }
});
