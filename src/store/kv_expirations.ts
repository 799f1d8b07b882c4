/**
 * When each record of a Deno KV file lapses, for `gatehouse storage copy`: Deno KV keeps a
 * record's expiry beside it, where its API never shows it, so it is read from the SQLite file
 * itself (the `kv` table's `expiration_ms`, -1 for none), by the key's encoded bytes (the same
 * encoding as record_codec.ts's). kv.ts gave Deno KV a minute of slack, taken off again here.
 */
import { DatabaseSync } from "node:sqlite";
import { EXPIRY_SLACK_MS } from "./kv.ts";

/** Hex of a key's encoded bytes → its expiresAt; empty for ":memory:" or a remote KV. */
export async function kvExpirations(path: string): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  if (path === ":memory:" || /^https?:\/\//.test(path)) return found;
  await Deno.stat(path);
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const rows = db.prepare("SELECT hex(k) AS k, expiration_ms FROM kv WHERE expiration_ms >= 0")
      .all() as { k: string; expiration_ms: number | bigint }[];
    for (const row of rows) {
      found.set(row.k.toLowerCase(), Number(row.expiration_ms) - EXPIRY_SLACK_MS);
    }
  } finally {
    db.close();
  }
  return found;
}
