/**
 * Edges of the PostgreSQL store that only a second connection racing it shows, against a real
 * PostgreSQL: the background sweep meeting a replica that writes the same key afresh.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { openPostgresStore } from "../src/store/postgres.ts";
import { encodeKey, encodeValue } from "../src/store/record_codec.ts";
import { sharedPostgres } from "./fixtures/postgres.ts";
import { testClock } from "./fixtures/clock.ts";
import { waitUntil, within } from "./fixtures/waits.ts";

const DAY = 86_400_000;

Deno.test("PostgreSQL store: the sweep leaves a record another replica wrote afresh while the sweep waited for it", async () => {
  const { url } = await sharedPostgres();
  const clock = testClock();
  clock.freeze();
  const store = await openPostgresStore(url, { clock, holder: "a", sweepEveryMs: DAY });
  const other = postgres(url, { max: 2, onnotice: () => {} });
  try {
    await store.set(["session", "s1"], "old", clock.now() + 1_000);
    clock.advance(2_000);
    // Another replica's `set` of the same key (a live value, no expiry), its transaction held
    // open until the sweep has read the lapsed row and waits for the lock on it.
    let commit!: () => void;
    const held = new Promise<void>((resolve) => commit = resolve);
    const writer = other.begin(async (tx) => {
      await tx`
        INSERT INTO gatehouse_records (key, value, version, expires_at)
        VALUES (${encodeKey(["session", "s1"])}, ${encodeValue("new")}, 'v2', NULL)
        ON CONFLICT (key) DO UPDATE
          SET value = excluded.value, version = excluded.version, expires_at = NULL`;
      await held;
    });
    await waitUntil("the other replica's write to hold the row", async () => {
      const [row] = await other`
        SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'transactionid' AND granted`;
      return row.n > 0;
    });
    const sweeping = store.sweepExpired();
    await waitUntil("the sweep to wait for the row's lock", async () => {
      const [row] = await other`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE wait_event_type = 'Lock' AND query LIKE '%DELETE FROM gatehouse_records%'`;
      return row.n > 0;
    });
    commit();
    await within("the other replica's commit", writer);
    assert.equal(await within("the sweep", sweeping), 0, "nothing that lapsed is left");
    assert.equal(await store.get(["session", "s1"]), "new", "the fresh write survives");
  } finally {
    await other.end();
    await store.closed();
  }
});

Deno.test("PostgreSQL store: a write its caller was told failed (it waited past the timeout for a connection) is never made later", async () => {
  const { url, postgres } = await sharedPostgres();
  // One connection, and a lock that holds every write for longer than the store waits: the
  // writes queue for the connection, and those still queued when their time is up fail.
  const store = await openPostgresStore(url, {
    sweep: false,
    pool: 1,
    statementTimeoutMs: 1_000,
    connectTimeoutMs: 1_000,
  });
  const database = new URL(url).pathname.slice(1);
  // Held until every write has been answered, then ended: whatever lands after that was sent
  // after its caller heard it failed.
  const holding = postgres.psql(
    "BEGIN; LOCK TABLE gatehouse_records IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(30); COMMIT;",
    database,
  ).catch(() => {});
  try {
    await waitUntil("the lock to be held", async () =>
      (await postgres.psql(
        "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(30)%' AND pid <> pg_backend_pid()",
      )).trim() !== "0");
    // Plain writes and transactions, each told whether it was made.
    const writes = [0, 1, 2, 3, 4, 5].map(async (i) => ({
      i,
      set: await store.set(["queued", i], i).then(() => true, () => false),
      committed: await store.commitIfUnchanged([], {
        writes: [{ key: ["committed", i], value: i }],
      })
        .then(() => true, () => false),
    }));
    const outcomes = await within("the queued writes to end", Promise.all(writes));
    assert.ok(outcomes.some((o) => !o.set), "some writes waited past the timeout");
    // A statement sent before its caller was answered may still be running (until the statement
    // timeout cuts it): that one is let end. Any started after the last answer was sent late.
    const answered = (await postgres.psql("SELECT clock_timestamp()")).trim();
    await waitUntil(
      "the statement under way at the last answer to be cut",
      async () =>
        (await postgres.psql(
          `SELECT count(*) FROM pg_stat_activity WHERE application_name = 'gatehouse'
         AND state = 'active' AND query_start <= '${answered}'::timestamptz`,
        )).trim() === "0",
    );
    await postgres.psql(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(30)%' AND pid <> pg_backend_pid()",
    );
    await within("the lock to end", holding);
    await store.set(["after"], 1);
    const landed = async (prefix: string) =>
      new Set((await store.list([prefix])).map((e) => e.key[1]));
    const queued = await landed("queued");
    const committed = await landed("committed");
    for (const o of outcomes) {
      assert.equal(queued.has(o.i), o.set, `set ${o.i}: made only if its caller was told so`);
      assert.equal(committed.has(o.i), o.committed, `commit ${o.i}: the same`);
    }
  } finally {
    await store.closed();
  }
});
