/**
 * `storage:` and `replicaId:`: where the gateway keeps its state, and this replica's name
 * among those sharing it.
 */
import { isPostgresUrl, showStorage } from "../core/storage_url.ts";
import type { Secret } from "../core/secret.ts";
import { Checker, describe } from "./checker.ts";
import type { StorageOptions } from "./types.ts";

const DEFAULT_STORAGE = "./data/gatehouse.kv";
const SSL_MODES = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"];

export function parseStorage(c: Checker, value: unknown): string {
  if (value === undefined) return DEFAULT_STORAGE;
  // Not c.string: its message would quote the value, and a URL's password with it.
  if (typeof value !== "string" || value.length === 0) {
    return c.string(value, ["storage"]) ?? DEFAULT_STORAGE;
  }
  if (isPostgresUrl(value)) checkPostgresUrl(c, value);
  return value;
}

/**
 * A PostgreSQL URL the client can use: a host, a database, a known sslmode. Every message shows
 * the URL with its password as *** (it usually comes from ${PGPASSWORD}, but need not).
 */
/** The query parameters of a PostgreSQL URL that the gateway takes (read as libpq reads them). */
const URL_PARAMETERS = ["sslmode", "target_session_attrs", "application_name"];

function checkPostgresUrl(c: Checker, value: string): void {
  const shown = showStorage(value);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    c.fail(
      ["storage"],
      `not a PostgreSQL URL: ${shown}`,
      "write postgres://USER:${PGPASSWORD}@HOST:5432/DATABASE?sslmode=verify-full (percent-encode : @ / in the password)",
    );
    return;
  }
  if (!url.hostname) {
    c.fail(["storage"], `names no host: ${shown}`, "write postgres://USER@HOST:5432/DATABASE");
  }
  if (url.pathname.length <= 1) {
    c.fail(
      ["storage"],
      `names no database: ${shown}`,
      "end the URL with /DATABASE, e.g. /gatehouse",
    );
  }
  const mode = url.searchParams.get("sslmode");
  if (mode !== null && !SSL_MODES.includes(mode)) {
    c.fail(["storage"], `unknown sslmode ${describe(mode)}`, `use one of ${SSL_MODES.join(", ")}`);
  }
  // Anything else in the query reaches PostgreSQL as a start-up parameter of every connection
  // (the client passes unknown ones on), so ?statement_timeout=0 or ?options=-c… would quietly
  // undo storageTimeout: only the parameters the gateway reads itself are taken.
  const unknown = [...new Set(url.searchParams.keys())]
    .filter((key) => !URL_PARAMETERS.includes(key) && key !== "password");
  if (unknown.length > 0) {
    c.fail(
      ["storage"],
      `has query parameters Gatehouse does not take: ${unknown.map((k) => describe(k)).join(", ")}`,
      `keep only ${
        URL_PARAMETERS.join(", ")
      }; timeouts and pool size are storageTimeout and storagePool, a CA file storageCaFile`,
    );
  }
  if (url.searchParams.has("password")) {
    c.fail(
      ["storage"],
      "has its password as a password= parameter",
      "put it in the URL's user part (postgres://USER:PASSWORD@HOST/DB), from ${PGPASSWORD}",
    );
  }
}

/**
 * Without `secret:` the gateway generates its master secret and keeps it in storage. In a
 * shared database that is the key to every token and sealed credential, in clear, readable by
 * whoever reads the database or a backup of it: said at check and at start.
 */
export function warnSecretInDatabase(c: Checker, storage: string, secret: Secret | undefined) {
  if (secret !== undefined || !isPostgresUrl(storage)) return;
  c.warn(
    ["secret"],
    "is not set: the master secret would be generated and kept in the database in clear, beside the tokens and credentials it seals",
    "set secret: ${GATEHOUSE_SECRET} (openssl rand -base64 48), the same on every replica",
  );
}

/** storagePool, storageTimeout, storageCaFile: how a PostgreSQL storage is reached. */
export function parseStorageOptions(
  c: Checker,
  raw: { storagePool?: unknown; storageTimeout?: unknown; storageCaFile?: unknown },
  storage: string,
): StorageOptions {
  const pool = c.positiveInteger(raw.storagePool, ["storagePool"], 10);
  const timeoutMs = c.duration(raw.storageTimeout, ["storageTimeout"], 10_000);
  const caFile = c.optionalString(raw.storageCaFile, ["storageCaFile"]);
  if (!isPostgresUrl(storage)) {
    for (const key of ["storagePool", "storageTimeout", "storageCaFile"] as const) {
      if (raw[key] !== undefined) {
        c.warn(
          [key],
          "applies to a PostgreSQL storage only",
          "storage: is a Deno KV here; drop it",
        );
      }
    }
  }
  return { pool, timeoutMs, ...(caFile !== undefined ? { caFile } : {}) };
}

/** Session ids carry it, so it is kept short and URL- and header-safe. */
export function parseReplicaId(c: Checker, value: unknown): string | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  const id = c.string(value, ["replicaId"]);
  if (id !== undefined && !/^[a-z0-9-]{1,32}$/.test(id)) {
    c.fail(
      ["replicaId"],
      `not a replica id: ${describe(id)}`,
      "use up to 32 lower-case letters, digits and '-', e.g. gw-1",
    );
    return undefined;
  }
  return id;
}
