/**
 * Deletes expired records from PostgreSQL in the background. Readers never see them anyway
 * (postgres.ts filters on expires_at); this keeps the table from growing. One replica sweeps at
 * a time: each round first takes or renews a lease row (`gatehouse_leases`, name "sweep") with
 * one INSERT … ON CONFLICT … WHERE, which succeeds for the holder or once the lease has lapsed.
 * A round deletes at most BATCHES × BATCH_SIZE records, a batch per statement, so no statement
 * holds many locks or runs long.
 */
import type { Sql } from "postgres";
import type { Clock, Timer } from "../core/clock.ts";

const EVERY_MS = 60_000;
/** A lease outlives two rounds, so a holder that stops is replaced within three minutes. */
const LEASE_MS = 3 * EVERY_MS;
const BATCH_SIZE = 500;
const BATCHES = 20;

export interface Sweep {
  /** One round now: takes the lease, deletes what has expired; how many were deleted. */
  once(): Promise<number>;
  stop(): void;
}

export function startSweep(
  sql: Sql,
  clock: Clock,
  holder: string,
  options: { onError?: (error: unknown) => void; everyMs?: number } = {},
): Sweep {
  let running: Promise<number> | undefined;
  const round = async (): Promise<number> => {
    const now = clock.now();
    const held = await sql`
      INSERT INTO gatehouse_leases (name, holder, until_ms) VALUES ('sweep', ${holder}, ${
      now + LEASE_MS
    })
      ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until_ms = excluded.until_ms
        WHERE gatehouse_leases.holder = excluded.holder OR gatehouse_leases.until_ms < ${now}
      RETURNING holder`;
    if (held.length === 0) return 0;
    let deleted = 0;
    for (let batch = 0; batch < BATCHES; batch++) {
      // The expiry is checked again on the row the DELETE locks: a replica that wrote the key
      // afresh since the inner SELECT read it (a live value, a later expiry) keeps its write.
      const rows = await sql`
        DELETE FROM gatehouse_records WHERE key IN (
          SELECT key FROM gatehouse_records
          WHERE expires_at IS NOT NULL AND expires_at <= ${now}
          ORDER BY expires_at LIMIT ${BATCH_SIZE})
          AND expires_at IS NOT NULL AND expires_at <= ${now}
        RETURNING 1`;
      deleted += rows.length;
      if (rows.length < BATCH_SIZE) break;
    }
    return deleted;
  };
  const once = () => {
    running ??= round().finally(() => running = undefined);
    return running;
  };
  const timer: Timer = clock.setInterval(
    () => void once().catch((error) => options.onError?.(error)),
    options.everyMs ?? EVERY_MS,
    { unref: true },
  );
  return { once, stop: () => timer.clear() };
}
