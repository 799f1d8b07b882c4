/**
 * `storage: postgres://…` as an operator meets it: `gatehouse check` reads the URL and never
 * prints its password; `serve` with the database unreachable says so and exits 3 within the
 * timeout instead of hanging; with it reachable, it starts, keeps what it wrote across a
 * restart; and a statement that waits too long is cut by the statement timeout.
 */
import assert from "node:assert/strict";
import { RUNTIME_PERMISSIONS } from "../scripts/compile.ts";
import { openPostgresStore } from "../src/store/postgres.ts";
import { StorageUnavailableError } from "../src/store/store.ts";
import { startGatewayProcess } from "./fixtures/gateway_process.ts";
import { sharedPostgres } from "./fixtures/postgres.ts";
import { refusedPort } from "./fixtures/ports.ts";
import { within } from "./fixtures/waits.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const CONFIG = new URL("../deno.json", import.meta.url).pathname;
const PASSWORD = "s3cret-Pa55word-never-printed";

async function gatehouse(args: string[], yaml: string, env: Record<string, string> = {}) {
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(`${dir}/config.yaml`, yaml);
  try {
    const output = await within(
      `gatehouse ${args[0]} to end`,
      new Deno.Command("deno", {
        args: [
          "run",
          ...RUNTIME_PERMISSIONS,
          "--config",
          CONFIG,
          MAIN,
          ...args,
          "--config",
          `${dir}/config.yaml`,
        ],
        env: { PGPASSWORD: PASSWORD, ...env },
        stdout: "piped",
        stderr: "piped",
      }).output(),
      60_000,
    );
    const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
    return { code: output.code, out: decode(output.stdout) + decode(output.stderr) };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const SERVERS = `servers:\n  demo:\n    transport: stdio\n    command: echo\n    public: true\n`;

Deno.test("gatehouse check reads a PostgreSQL URL and never prints its password", async () => {
  const good = await gatehouse(
    ["check"],
    `storage: postgres://gatehouse:\${PGPASSWORD}@db.internal:5432/gatehouse?sslmode=verify-full\nstoragePool: 4\nstorageTimeout: 5s\n${SERVERS}`,
  );
  assert.equal(good.code, 0, good.out);
  assert.ok(!good.out.includes(PASSWORD), good.out);

  const bad = await gatehouse(
    ["check"],
    `storage: postgres://gatehouse:\${PGPASSWORD}@db.internal:5432/?sslmode=verify-everything\nstoragePool: 0\n${SERVERS}`,
  );
  assert.equal(bad.code, 78, bad.out);
  assert.match(
    bad.out,
    /storage: names no database: postgres:\/\/gatehouse:\*\*\*@db\.internal:5432\//,
  );
  assert.match(bad.out, /storage: unknown sslmode "verify-everything"/);
  assert.match(bad.out, /storagePool: expected a whole number above 0/);
  assert.ok(!bad.out.includes(PASSWORD), bad.out);

  const kv = await gatehouse(["check"], `storage: ./data/x.kv\nstoragePool: 4\n${SERVERS}`);
  assert.equal(kv.code, 0, kv.out);
  assert.match(kv.out, /storagePool: applies to a PostgreSQL storage only/);
});

Deno.test("gatehouse serve with the database unreachable says so and exits 3 within the timeout", async () => {
  const port = await refusedPort();
  const started = performance.now();
  const result = await gatehouse(
    ["serve"],
    `listen: 127.0.0.1:0\nstorage: postgres://gatehouse:\${PGPASSWORD}@127.0.0.1:${port}/gatehouse\nstorageTimeout: 2s\n${SERVERS}`,
  );
  assert.equal(result.code, 3, result.out);
  assert.match(result.out, /cannot open storage/);
  assert.match(result.out, /ECONNREFUSED/);
  assert.match(result.out, /gatehouse:\*\*\*@127\.0\.0\.1/);
  assert.ok(!result.out.includes(PASSWORD), result.out);
  assert.ok(performance.now() - started < 60_000, "bounded by the timeout, not a hang");
});

Deno.test("gatehouse serve on PostgreSQL starts, and what it stored is there after a restart", async () => {
  const { url } = await sharedPostgres();
  const password = new URL(url).password;
  const yaml = `listen: 127.0.0.1:{{PORT}}\nstorage: ${
    url.replace(password, "${PGPASSWORD}")
  }\n${SERVERS}`;
  const first = await startGatewayProcess(yaml, { PGPASSWORD: password });
  await first.close();
  const store = await openPostgresStore(url, { sweep: false });
  try {
    const secret = await store.get<string>(["gatehouse", "master-secret"]);
    assert.ok(secret, "the generated master secret was kept in PostgreSQL");
    const second = await startGatewayProcess(yaml, { PGPASSWORD: password });
    await second.close();
    assert.equal(
      await store.get(["gatehouse", "master-secret"]),
      secret,
      "the same one after a restart",
    );
    assert.ok(!first.logs().includes(password) && !second.logs().includes(password));
  } finally {
    await store.closed();
  }
});

Deno.test("a statement that waits longer than storageTimeout is cut and reported unavailable", async () => {
  const { url, postgres } = await sharedPostgres();
  const store = await openPostgresStore(url, { statementTimeoutMs: 500, sweep: false });
  const database = new URL(url).pathname.slice(1);
  // Another session holds the table for 20 s: the store's write waits for it, and is cut.
  // Ended by pg_terminate_backend below, so its failure is expected: caught from the start, or
  // it would be an unhandled rejection while the finally block waits for the termination.
  const holding = postgres.psql(
    "BEGIN; LOCK TABLE gatehouse_records IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(20); COMMIT;",
    database,
  ).catch(() => {});
  try {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const error = await store.set(["waits"], 1).then(() => undefined, (e) => e);
    assert.ok(error instanceof StorageUnavailableError, String(error));
    // The log hears why and where (error.detail); the message, which may reach a client (a
    // JSON-RPC error from a call that needed storage), names neither the database nor its host.
    assert.match(error.detail, /57014|statement timeout/);
    assert.match(error.detail, /gatehouse:\*\*\*@127\.0\.0\.1/);
    for (const part of ["127.0.0.1", database, "postgres://", "57014"]) {
      assert.ok(!error.message.includes(part), error.message);
    }
  } finally {
    await postgres.psql(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(20)%' AND pid <> pg_backend_pid()`,
    );
    await holding;
    await store.closed();
  }
});
