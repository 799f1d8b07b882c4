/**
 * What only the PostgreSQL store has, against a real PostgreSQL: expiry honoured by every
 * reader (Deno KV deletes late and the gateway checks its own expiries there), the background
 * sweep one replica at a time in bounded batches, migrations run by replicas starting together,
 * and a database that cannot be reached or refuses the password named without the password.
 */
import assert from "node:assert/strict";
import { openPostgresStore } from "../src/store/postgres.ts";
import { MIGRATIONS } from "../src/store/postgres_schema.ts";
import { StorageUnavailableError } from "../src/store/store.ts";
import { sharedPostgres } from "./fixtures/postgres.ts";
import { refusedPort } from "./fixtures/ports.ts";
import { testClock } from "./fixtures/clock.ts";

/** The sweep's own timer stays out of the way: the test runs each round itself. */
const DAY = 86_400_000;

Deno.test("PostgreSQL store: a record past its expiresAt is absent to every reader and swept", async () => {
  const { url, postgres } = await sharedPostgres();
  const clock = testClock();
  clock.freeze();
  const store = await openPostgresStore(url, { clock, holder: "a", sweepEveryMs: DAY });
  const other = await openPostgresStore(url, { clock, holder: "b", sweepEveryMs: DAY });
  try {
    const at = clock.now() + 60_000;
    await store.set(["lapses", "set"], "v", at);
    await store.commitIfUnchanged([], {
      writes: [{ key: ["lapses", "written"], value: 1, expiresAt: at }],
    });
    await store.set(["stays"], "forever");
    const before = await store.getEntry(["lapses", "set"]);
    assert.equal(before.value, "v");
    clock.advance(60_000);
    assert.equal(await store.get(["lapses", "set"]), undefined);
    assert.deepEqual(await store.getEntry(["lapses", "set"]), {
      key: ["lapses", "set"],
      value: undefined,
      version: null,
    });
    assert.deepEqual(await store.list(["lapses"]), []);
    assert.equal(await store.consume(["lapses", "written"]), undefined);
    assert.equal(
      await store.consumeAndWrite(["lapses", "set"], [{ key: ["x"], value: 1 }]),
      undefined,
    );
    assert.equal(await store.get(["x"]), undefined);
    await store.set(["lapses", "again"], "old", at);
    assert.equal(
      await store.setIfAbsent(["lapses", "again"], "new"),
      "new",
      "an expired record is absent to setIfAbsent",
    );
    await store.set(["lapses", "checked"], "old", at);
    assert.equal(
      await store.commitIfUnchanged([{ key: ["lapses", "checked"], version: null }], {
        writes: [],
      }),
      true,
      "checked as absent",
    );
    assert.equal(await store.commitIfUnchanged([before], { writes: [] }), false);

    // The sweep: one holder of the lease at a time; it deletes what lapsed, nothing else (the
    // 1,200 and one left above: lapses/checked; consumeAndWrite removed lapses/set).
    for (let i = 0; i < 1_200; i++) await store.set(["bulk", i], i, at);
    assert.equal(
      Number(
        await postgres.psql(
          "SELECT count(*) FROM gatehouse_records WHERE expires_at IS NOT NULL",
          dbName(url),
        ),
      ),
      1_201,
    );
    assert.equal(await store.sweepExpired(), 1_201, "the first holder sweeps in batches of 500");
    assert.equal(await other.sweepExpired(), 0, "the other replica does not hold the lease");
    assert.equal(await store.get(["stays"]), "forever");
    assert.equal(await store.get(["lapses", "again"]), "new");
    clock.advance(4 * 60_000);
    await other.set(["late"], 1, clock.now() - 1);
    assert.equal(await other.sweepExpired(), 1, "a lapsed lease passes to another replica");
  } finally {
    await store.closed();
    await other.closed();
  }
});

function dbName(url: string): string {
  return new URL(url).pathname.slice(1);
}

Deno.test("PostgreSQL store: replicas starting together migrate once and all start", async () => {
  const { url, postgres } = await sharedPostgres();
  const stores = await Promise.all(
    Array.from({ length: 5 }, () => openPostgresStore(url, { sweep: false })),
  );
  try {
    await stores[0].set(["k"], 1);
    assert.equal(await stores[4].get(["k"]), 1);
    const versions = await postgres.psql(
      "SELECT version FROM gatehouse_schema ORDER BY version",
      dbName(url),
    );
    assert.deepEqual(versions.trim().split("\n").map(Number), MIGRATIONS.map((m) => m.version));
    const again = await openPostgresStore(url, { sweep: false });
    assert.equal(await again.get(["k"]), 1, "a restart keeps every record");
    await again.closed();
  } finally {
    for (const store of stores) await store.closed();
  }
});

Deno.test("PostgreSQL store: an unreachable database or a wrong password is an error that names neither the password nor hangs", async () => {
  const { url } = await sharedPostgres();
  const password = new URL(url).password;
  const refused = new URL(url);
  refused.port = String(await refusedPort());
  const error = await openPostgresStore(refused.toString(), { connectTimeoutMs: 2_000 }).then(
    () => undefined,
    (e) => e,
  );
  assert.ok(error instanceof StorageUnavailableError, String(error));
  assert.match(error.message, /ECONNREFUSED|refused/i);
  assert.ok(!error.message.includes(password), error.message);
  assert.match(error.message, /gatehouse:\*\*\*@127\.0\.0\.1/);

  const wrong = new URL(url);
  wrong.password = "not-" + password;
  const refusedLogin = await openPostgresStore(wrong.toString()).then(() => undefined, (e) => e);
  assert.ok(refusedLogin instanceof Error);
  assert.match(refusedLogin.message, /password authentication failed/);
  assert.ok(!refusedLogin.message.includes(password), refusedLogin.message);
});
