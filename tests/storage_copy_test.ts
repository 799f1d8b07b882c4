/**
 * `gatehouse storage copy`, as an operator moving a one-VM installation onto PostgreSQL runs
 * it: a gateway on a KV file signs a person in; after the copy, a gateway on PostgreSQL with the
 * same secret takes the person's tokens as if nothing had moved (nobody signs in again), every
 * record is there with its expiry, the count is checked, a target that is not empty is refused,
 * and the database password appears in nothing the command prints.
 */
import assert from "node:assert/strict";
import { RUNTIME_PERMISSIONS } from "../scripts/compile.ts";
import { openKvStore } from "../src/store/kv.ts";
import { openPostgresStore } from "../src/store/postgres.ts";
import { startBalancer } from "./fixtures/balancer.ts";
import { listenForGateway } from "./fixtures/gateway.ts";
import { startIdp } from "./fixtures/idp.ts";
import { idpSection, TEST_MASTER_SECRET } from "./fixtures/oauth_gateway.ts";
import { exchangeCode, obtainCode, registerClient, token } from "./fixtures/oauth_raw.ts";
import { sharedPostgres } from "./fixtures/postgres.ts";
import { mcpHeaders, post } from "./fixtures/raw.ts";
import { UserAgent } from "./fixtures/user_agent.ts";
import { within } from "./fixtures/waits.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const ROOT = new URL("../", import.meta.url).pathname;

async function copy(from: string, to: string) {
  const output = await within(
    "gatehouse storage copy to end",
    new Deno.Command("deno", {
      // The compiled binary's permissions: the copy needs no more than the gateway has.
      args: [
        "run",
        ...RUNTIME_PERMISSIONS,
        "--config",
        `${ROOT}deno.json`,
        `${ROOT}main.ts`,
        "storage",
        "copy",
        "--from",
        from,
        "--to",
        to,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output(),
    60_000,
  );
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, out: text(output.stdout) + text(output.stderr) };
}

Deno.test("gatehouse storage copy moves a KV installation onto PostgreSQL: tokens issued before work after, nobody signs in again", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-copy-" });
  const kvPath = `${dir}/gatehouse.kv`;
  const { url } = await sharedPostgres();
  const password = new URL(url).password;
  const lb = startBalancer();
  const idp = await startIdp([`${lb.url}/oauth/callback`]);
  const yaml = (storage: string) => `
baseUrl: ${lb.url}
storage: ${storage}
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
  const env = { IDP_SECRET: idp.clientSecret };
  try {
    // One machine, on a KV file: a person signs in and their client holds tokens.
    const before = await (await listenForGateway()).start(yaml(kvPath), env, { storage: kvPath });
    lb.replicas.a = before.url;
    lb.route("a");
    const client = await registerClient(lb.url);
    const code = (await obtainCode(new UserAgent(), lb.url, client.client_id, `${lb.url}/alpha`))
      .get("code")!;
    const tokens = (await exchangeCode(lb.url, client.client_id, code)).json;
    await before.close();
    const kv = await openKvStore(kvPath);
    const expiring = Date.now() + 3_600_000;
    await kv.set(["test", "expiring"], "lapses in an hour", expiring);
    const recordCount = (await kv.list([])).length;
    kv.close();

    const copied = await copy(kvPath, url);
    assert.equal(copied.code, 0, copied.out);
    assert.match(
      copied.out,
      new RegExp(`copied ${recordCount} records .* ${recordCount} readable`),
    );
    assert.ok(!copied.out.includes(password), copied.out);
    const store = await openPostgresStore(url, { sweep: false });
    try {
      const records = [];
      for await (const record of store.records()) records.push(record);
      assert.equal(records.length, recordCount);
      const test = records.find((r) => r.key[0] === "test")!;
      assert.equal(test.value, "lapses in an hour");
      assert.ok(Math.abs(test.expiresAt! - expiring) < 5_000, "the expiry came along");
    } finally {
      await store.closed();
    }

    // The same address, now on PostgreSQL: the access token and the refresh token still work.
    const after = await (await listenForGateway()).start(yaml(url), env, { storage: url });
    lb.replicas.a = after.url;
    try {
      const listed = await post(
        `${lb.url}/alpha/mcp`,
        {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "t", version: "1" },
          },
        },
        mcpHeaders({ authorization: `Bearer ${tokens.access_token}` }),
      );
      assert.equal(listed.status, 200, listed.text);
      const refreshed = await token(lb.url, {
        grant_type: "refresh_token",
        refresh_token: tokens.refresh_token,
        client_id: client.client_id,
      });
      assert.equal(refreshed.status, 200, JSON.stringify(refreshed.json));
    } finally {
      await after.close();
    }

    const again = await copy(kvPath, url);
    assert.equal(again.code, 3);
    assert.match(again.out, /is not empty/);
    assert.match(again.out, /interrupted copy, empty it \(DROP TABLE gatehouse_records, /);
    assert.ok(!again.out.includes(password), again.out);
    const missing = await copy(`${dir}/nothing-here.kv`, url);
    assert.equal(missing.code, 3);
    assert.match(missing.out, /there is no storage file/);
  } finally {
    await lb.close();
    await idp.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("gatehouse storage copy to a URL it cannot read names it without its password", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const kvPath = `${dir}/gatehouse.kv`;
    (await openKvStore(kvPath)).close();
    // Two hosts with their ports: libpq takes it, a URL parser does not.
    const copied = await copy(kvPath, "postgres://gatehouse:s3cret-pw@db1:5432,db2:5433/gh");
    assert.equal(copied.code, 3);
    assert.match(copied.out, /not a PostgreSQL URL: postgres:\/\/…/);
    assert.ok(!copied.out.includes("s3cret-pw"), copied.out);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
