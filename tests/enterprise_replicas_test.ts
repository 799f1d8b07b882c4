/**
 * ID-JAGs across replicas: two gateways on one storage take the same assertion at once and
 * exactly one issues a token (the `jti` is recorded with the grant in one conditional write);
 * the grant is listed as issued by an ID-JAG, and revoking it ends its token on both, as for a
 * code-flow grant.
 */
import assert from "node:assert/strict";
import { systemClock } from "../src/core/clock.ts";
import { ClientDirectory } from "../src/oauth/client_directory.ts";
import { GrantAdmin } from "../src/oauth/grant_admin.ts";
import { GrantStore } from "../src/oauth/grants.ts";
import { openKvStore } from "../src/store/kv.ts";
import { listenForGateway, type TestGateway } from "./fixtures/gateway.ts";
import { startIdp } from "./fixtures/idp.ts";
import { IdJagKeys, type IdJagPolicy } from "./fixtures/idp_id_jag.ts";
import { idpSection, TEST_MASTER_SECRET } from "./fixtures/oauth_gateway.ts";
import { waitUntil } from "./fixtures/waits.ts";
import { stdioEnvYaml } from "./fixtures/deno_dir.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const GW_CLIENT = "chat-gw";
const GW_SECRET = "chat-gateway-secret-0123456789abcdef0123";
const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";

Deno.test("ID-JAG on two replicas: one assertion issues one token; its grant is listed as an ID-JAG's and revoked on both", async () => {
  const keys = await IdJagKeys.create();
  const policy: IdJagPolicy = { clients: { "chat-app": GW_CLIENT }, lifetime: 300, issued: 0 };
  const idp = await startIdp([], { idJag: { keys, policy } });
  const store = await openKvStore(":memory:");
  const gateways: TestGateway[] = [];
  // Both replicas answer for one public URL, as behind a load balancer: the first's.
  const sockets = [await listenForGateway(), await listenForGateway()];
  const publicUrl = sockets[0].url;
  try {
    for (const socket of sockets) {
      gateways.push(
        await socket.start(
          `
baseUrl: ${publicUrl}
secret: ${TEST_MASTER_SECRET}
servers:
  alpha:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts"]
oauth:
${idpSection(idp)}
  idJag: true
  clients:
    - id: ${GW_CLIENT}
      secret: ${GW_SECRET}
      name: Chat
`,
          { IDP_SECRET: idp.clientSecret },
          { store },
        ),
      );
    }
    const now = Math.floor(Date.now() / 1000);
    const assertion = await keys.sign({
      iss: idp.issuer,
      sub: "alice-example-com",
      aud: publicUrl,
      client_id: GW_CLIENT,
      jti: crypto.randomUUID(),
      iat: now,
      exp: now + 300,
      resource: `${publicUrl}/alpha`,
      scope: "mcp",
      email: "alice@example.com",
    });
    const present = (gateway: TestGateway) =>
      fetch(`${gateway.url}/token`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: `Basic ${btoa(`${GW_CLIENT}:${GW_SECRET}`)}`,
        },
        body: new URLSearchParams({ grant_type: JWT_BEARER, assertion }),
      }).then(async (response) => ({ status: response.status, body: await response.json() }));
    const answers = await Promise.all(gateways.map(present));
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 400], "exactly one replica issues");
    const refused = answers.find((a) => a.status === 400)!;
    assert.equal(refused.body.error, "invalid_grant");
    assert.match(refused.body.error_description, /already used/);
    const token = answers.find((a) => a.status === 200)!.body.access_token as string;

    // Listed as issued by an ID-JAG, as `gatehouse grants list` and /my/access show it.
    const lifetimes = { codeMs: 60_000, refreshMs: 86_400_000, accessMs: 300_000 };
    const grants = new GrantStore(store, systemClock, lifetimes);
    const clients = new ClientDirectory({
      store,
      clock: systemClock,
      unusedClientTtlMs: 60_000,
      redirectSchemes: [],
    });
    const admin = new GrantAdmin({ store, clock: systemClock, grants, clients });
    const listed = await admin.list({ email: "alice@example.com" });
    assert.equal(listed.length, 1);
    assert.equal(listed[0].issuedVia, "id-jag");
    assert.equal(listed[0].clientId, GW_CLIENT);
    assert.deepEqual(listed[0].audience, [`${publicUrl}/alpha`]);

    // The token works on both replicas until the grant is revoked, then on neither.
    const call = (gateway: TestGateway) =>
      fetch(`${gateway.url}/alpha/mcp`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2025-11-25",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-11-25",
            capabilities: {},
            clientInfo: { name: "t", version: "1" },
          },
        }),
      }).then(async (response) => {
        await response.body?.cancel();
        return response.status;
      });
    assert.deepEqual(await Promise.all(gateways.map(call)), [200, 200]);
    await admin.revoke({ grant: listed[0].id });
    await waitUntil(
      "both replicas to refuse the revoked ID-JAG grant's token",
      async () => (await Promise.all(gateways.map(call))).every((status) => status === 401),
    );
  } finally {
    for (const gateway of gateways) await gateway.close();
    for (const socket of sockets.slice(gateways.length)) await socket.close();
    store.close();
    await idp.close();
  }
});

Deno.test("ID-JAG and a server that needs the person's own token: the token is issued, and the first call reaches the connect path (-32042)", async () => {
  const keys = await IdJagKeys.create();
  const policy: IdJagPolicy = { clients: { "chat-app": GW_CLIENT }, lifetime: 300, issued: 0 };
  const idp = await startIdp([], { idJag: { keys, policy } });
  const socket = await listenForGateway();
  let gateway: TestGateway | undefined;
  try {
    gateway = await socket.start(
      `
baseUrl: http://127.0.0.1:{{PORT}}
secret: ${TEST_MASTER_SECRET}
servers:
  notes:
    transport: stdio
    command: deno
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts"]
    env: ${stdioEnvYaml({ NOTES_TOKEN: "{{user.token}}" })}
    requiresUserToken: true
    userToken: { kind: manual, displayName: Notes }
oauth:
${idpSection(idp)}
  idJag: true
  clients:
    - id: ${GW_CLIENT}
      secret: ${GW_SECRET}
`,
      { IDP_SECRET: idp.clientSecret },
    );
    const url = gateway.url;
    const now = Math.floor(Date.now() / 1000);
    const assertion = await keys.sign({
      iss: idp.issuer,
      sub: "alice-example-com",
      aud: url,
      client_id: GW_CLIENT,
      jti: crypto.randomUUID(),
      iat: now,
      exp: now + 300,
      resource: `${url}/notes`,
      email: "alice@example.com",
    });
    const issued = await fetch(`${url}/token`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${btoa(`${GW_CLIENT}:${GW_SECRET}`)}`,
      },
      body: new URLSearchParams({ grant_type: JWT_BEARER, assertion }),
    });
    assert.equal(issued.status, 200, "the token is issued though the person has no Notes token");
    const token = (await issued.json()).access_token;
    const response = await fetch(`${url}/notes/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: { elicitation: { form: {}, url: {} } },
          clientInfo: { name: "raw", version: "1" },
        },
      }),
    });
    const body = await response.json();
    assert.equal(body.error.code, -32042);
    assert.equal(body.error.data.elicitations[0].url, `${url}/my/tokens?service=notes`);
  } finally {
    if (gateway) await gateway.close();
    else await socket.close();
    await idp.close();
  }
});
