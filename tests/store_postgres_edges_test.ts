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
