/**
 * The PostgreSQL schema, created or brought up to date when a replica starts. Each migration is
 * applied in the transaction that claims its row in `gatehouse_schema`: replicas starting
 * together all try to claim it, the primary key lets one through, and the others wait for its
 * commit and find the row taken (or, should it roll back, claim it themselves). No advisory lock
 * is needed, so CockroachDB and YugabyteDB run the same statements. The SQL is constant text.
 */
import type { Sql } from "postgres";

export interface Migration {
  version: number;
  statements: string[];
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    statements: [
      // key: record_codec.ts's order-preserving bytes; value: V8-serialized (sealed where the
      // gateway seals: the database never holds a token or credential in clear); version: a
      // random string per write; expires_at: ms since the epoch on the gateway's clock.
      `CREATE TABLE gatehouse_records (
        key bytea PRIMARY KEY,
        value bytea NOT NULL,
        version text NOT NULL,
        expires_at bigint
      )`,
      `CREATE INDEX gatehouse_records_expiry ON gatehouse_records (expires_at)`,
      // Background work one replica at a time (the expiry sweep): who holds it, until when.
      `CREATE TABLE gatehouse_leases (
        name text PRIMARY KEY,
        holder text NOT NULL,
        until_ms bigint NOT NULL
      )`,
    ],
  },
];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;

/** SQLSTATEs of two replicas creating the same table at once: the loser tries again. */
const CREATED_MEANWHILE = new Set(["23505", "42P07", "42710"]);

/** Applies every migration the database has not had; returns the versions this call applied. */
export async function migrate(sql: Sql, now: () => number): Promise<number[]> {
  for (let attempt = 1;; attempt++) {
    try {
      await sql.unsafe(
        `CREATE TABLE IF NOT EXISTS gatehouse_schema (
          version integer PRIMARY KEY,
          applied_at bigint NOT NULL
        )`,
      );
      break;
    } catch (error) {
      const code = (error as { code?: string }).code ?? "";
      if (!CREATED_MEANWHILE.has(code) || attempt >= 5) throw error;
    }
  }
  const applied: number[] = [];
  for (const migration of MIGRATIONS) {
    await sql.begin(async (tx) => {
      const claimed = await tx`
        INSERT INTO gatehouse_schema (version, applied_at) VALUES (${migration.version}, ${now()})
        ON CONFLICT (version) DO NOTHING RETURNING version`;
      if (claimed.length === 0) return;
      for (const statement of migration.statements) await tx.unsafe(statement);
      applied.push(migration.version);
    });
  }
  return applied;
}
