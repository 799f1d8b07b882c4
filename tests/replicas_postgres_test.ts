/**
 * Replicas on PostgreSQL for real: gateway processes sharing one database behind a load
 * balancer (the flow of scale_out_test.ts: registration, sign-in, tokens, refresh and its
 * reuse, sessions), three in-process replicas each with its own pool (a token from one works on
 * all; a revocation on the third ends it on the other two), and the database as an attacker who
 * reads it would see it: every table
 * dumped and searched for each secret the test created, none found in clear. What else is
 * shared across replicas on PostgreSQL is run by the tests of each feature on both engines:
 * revocation_test.ts, tool_integrity_test.ts, https_acme_test.ts, remote_servers_more_test.ts.
 */
import assert from "node:assert/strict";
import { openPostgresStore } from "../src/store/postgres.ts";
import {
  connectLinearAccount,
  csrfOf,
  openTokensPage,
  postForm,
  startCredentialGateway,
} from "./fixtures/credential_gateway.ts";
import { TEST_MASTER_SECRET } from "./fixtures/oauth_gateway.ts";
import { connectWithOAuth, MemoryOAuthProvider } from "./fixtures/oauth_client.ts";
import { exchangeCode, obtainCode, registerClient } from "./fixtures/oauth_raw.ts";
import { listenForGateway, type TestGateway } from "./fixtures/gateway.ts";
import { startIdp } from "./fixtures/idp.ts";
import { idpSection } from "./fixtures/oauth_gateway.ts";
import { mcpHeaders, openSession, post } from "./fixtures/raw.ts";
import { waitUntil } from "./fixtures/waits.ts";
import { sharedPostgres } from "./fixtures/postgres.ts";
import { scaleOutFlow } from "./fixtures/scale_out_flow.ts";
import { UserAgent } from "./fixtures/user_agent.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

Deno.test("two replicas on PostgreSQL: registration, sign-in, tokens, refresh and HTTP sessions carry across", async (t) => {
  const { url } = await sharedPostgres();
  await scaleOutFlow(t, url);
});

const ROOT = new URL("../", import.meta.url).pathname;

Deno.test("three replicas on PostgreSQL, each with its own pool: a token from one works on all, and a revocation on another ends it everywhere within 10 s", async () => {
  const { url } = await sharedPostgres();
  const sockets = await Promise.all([listenForGateway(), listenForGateway(), listenForGateway()]);
  const base = sockets[0].url;
  const idp = await startIdp([`${base}/oauth/callback`]);
  // One address and secret for all three, as behind a load balancer; each opens its own pool.
  const yaml = `
baseUrl: ${base}
storage: ${url}
secret: ${TEST_MASTER_SECRET}
servers:
  alpha:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts"]
oauth:
${idpSection(idp)}
`;
  const replicas: TestGateway[] = [];
  try {
    for (const socket of sockets) {
      replicas.push(await socket.start(yaml, { IDP_SECRET: idp.clientSecret }, { storage: url }));
    }
    const client = await registerClient(base);
    const code = (await obtainCode(new UserAgent(), base, client.client_id, `${base}/alpha`))
      .get("code")!;
    const access = (await exchangeCode(base, client.client_id, code)).json.access_token;
    const bearer = { authorization: `Bearer ${access}` };
    const list = (at: string, session: string) =>
      post(
        `${at}/alpha/mcp`,
        { jsonrpc: "2.0", id: 2, method: "tools/list" },
        mcpHeaders({ ...bearer, "mcp-session-id": session }),
      );
    const sessions: string[] = [];
    for (const socket of sockets) {
      const session = await openSession(`${socket.url}/alpha/mcp`, bearer);
      sessions.push(session);
      assert.equal((await list(socket.url, session)).status, 200, `on ${socket.url}`);
    }
    // Revoked through the third replica's /revoke; the first two learn it from PostgreSQL.
    const revoked = await fetch(`${sockets[2].url}/revoke`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ client_id: client.client_id, token: access }),
    });
    await revoked.body?.cancel();
    assert.equal(revoked.status, 200);
    for (const [i, socket] of sockets.entries()) {
      await waitUntil(
        `replica ${i + 1} to refuse the revoked token`,
        async () => (await list(socket.url, sessions[i])).status === 401,
        { ms: 10_000, every: 100 },
      );
    }
  } finally {
    for (const replica of replicas) await replica.close();
    for (const socket of sockets.slice(replicas.length)) await socket.close();
    await idp.close();
  }
});

/** `text` as bytes in the encodings a value could hold it in: UTF-8, and V8's two-byte form. */
function encodings(text: string): string[] {
  const hex = (bytes: Uint8Array) =>
    Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  const utf16 = new Uint8Array(text.length * 2);
  for (let i = 0; i < text.length; i++) {
    utf16[2 * i] = text.charCodeAt(i) & 0xff;
    utf16[2 * i + 1] = text.charCodeAt(i) >> 8;
  }
  return [text, hex(new TextEncoder().encode(text)), hex(utf16)];
}

/** Every string in a decoded value, and every byte array read as text. */
function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (value instanceof Uint8Array) out.push(new TextDecoder().decode(value));
  else if (Array.isArray(value)) { for (const item of value) strings(item, out); }
  else if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) out.push(key), strings(item, out);
  }
  return out;
}

Deno.test("PostgreSQL holds no token, credential or key in clear: every table dumped and searched for each secret", async () => {
  const { url, postgres } = await sharedPostgres();
  const setup = await startCredentialGateway({ storage: url });
  const clients: { close(): Promise<void> }[] = [];
  try {
    const agent = new UserAgent();
    setup.idp.loginAs = { email: "alice@example.com", name: "Alice" };
    const page = await openTokensPage(agent, setup.url);
    const pasted = `ntn_${crypto.randomUUID().replaceAll("-", "")}`;
    const saved = await postForm(agent, setup.url, "/my/tokens/set", {
      csrf: csrfOf(page),
      service: "notion",
      token: pasted,
      next: "tokens",
    });
    await saved.body?.cancel();
    assert.equal(saved.status, 303);
    await connectLinearAccount(setup, agent, "alice@linear.example");
    const provider = new MemoryOAuthProvider();
    const { client } = await connectWithOAuth(agent, `${setup.url}/linear/mcp`, provider);
    clients.push(client);
    const echoed = await client.callTool({ name: "echo_environment", arguments: {} });
    const linearToken = (echoed.structuredContent as { env: Record<string, string> }).env
      .SERVICE_TOKEN;
    assert.ok(linearToken, "the person's Linear token reached the backend");
    const confidential = await registerClient(setup.url, {
      token_endpoint_auth_method: "client_secret_post",
    });
    const secrets: Record<string, string> = {
      "pasted Notion token": pasted,
      "Linear access token": linearToken,
      "gateway access token": provider.savedTokens!.access_token,
      "gateway refresh token": provider.savedTokens!.refresh_token!,
      "client secret": confidential.client_secret!,
      "master secret": TEST_MASTER_SECRET,
      "identity provider's client secret": setup.idp.clientSecret,
      "Linear's client secret": setup.linear.clientSecret,
      ...Object.fromEntries(
        [...agent.cookies(new URL(setup.url))].map(([name, value]) => [`cookie ${name}`, value]),
      ),
    };
    for (const [what, secret] of Object.entries(secrets)) assert.ok(secret, `${what} was made`);

    const database = new URL(url).pathname.slice(1);
    const tables = (await postgres.psql(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
      database,
    )).trim().split("\n");
    assert.deepEqual(tables, ["gatehouse_leases", "gatehouse_records", "gatehouse_schema"]);
    let dump = "";
    for (const table of tables) dump += await postgres.psql(`SELECT * FROM ${table}`, database);
    console.log(`dump: ${dump.length} characters, ${dump.split("\n").length} rows`);
    assert.ok(dump.split("\n").length > 10, "the dump holds the records");
    const store = await openPostgresStore(url, { sweep: false });
    const decoded: string[] = [];
    try {
      for await (const record of store.records()) strings([record.key, record.value], decoded);
    } finally {
      await store.closed();
    }
    const readable = decoded.join("\n");
    for (const [what, secret] of Object.entries(secrets)) {
      for (const form of encodings(secret)) {
        assert.ok(!dump.includes(form), `the ${what} is in the dump`);
      }
      assert.ok(!readable.includes(secret), `the ${what} is in a decoded value`);
    }
  } finally {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await setup.close();
  }
});
