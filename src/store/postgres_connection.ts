/**
 * From `storage: postgres://…` and its options to the client's settings: the pool size, a
 * connect timeout (an unreachable database is an error at start, not a hang), a statement
 * timeout (a statement that hangs is cut by the server), `sslmode` read as libpq reads it with
 * an optional CA file; and which failures mean "the database cannot be reached now".
 */
import type { Options } from "postgres";
import { showStorage } from "../core/storage_url.ts";

export interface PostgresSettings {
  /** Connections this replica keeps at most (storagePool). */
  pool: number;
  connectTimeoutMs: number;
  statementTimeoutMs: number;
  /** PEM of the CA certificates the server's certificate must chain to (storageCaFile). */
  ca?: string;
}

export const DEFAULT_SETTINGS: PostgresSettings = {
  pool: 10,
  connectTimeoutMs: 10_000,
  statementTimeoutMs: 10_000,
};

const SSL_MODES = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"] as const;
export type SslMode = typeof SSL_MODES[number];

/** The sslmode a URL asks for (libpq's default, prefer, when it names none), or an error. */
export function sslModeOf(url: URL): SslMode | Error {
  const mode = url.searchParams.get("sslmode") ?? "prefer";
  return (SSL_MODES as readonly string[]).includes(mode)
    ? mode as SslMode
    : new Error(`unknown sslmode ${mode}: use one of ${SSL_MODES.join(", ")}`);
}

/**
 * `storage` as a URL. The parser's own error quotes its input, password and all, so a URL it
 * cannot read is named here as showStorage shows it.
 */
function parseUrl(storage: string): URL {
  try {
    return new URL(storage);
  } catch {
    throw new Error(
      `not a PostgreSQL URL: ${showStorage(storage)}; write ` +
        "postgres://USER:PASSWORD@HOST:5432/DATABASE (percent-encode : @ / in the password; " +
        "several hosts as HOST1,HOST2 on the default port)",
    );
  }
}

/**
 * The client's options. The URL is handed over without sslmode, which is turned into TLS
 * settings here: the client's own reading of verify-full does not take a CA file, and require
 * with a CA file verifies the chain as libpq does.
 */
export function clientOptions(
  storage: string,
  settings: PostgresSettings,
): { url: string; options: Options<Record<string, never>> } {
  const url = parseUrl(storage);
  const mode = sslModeOf(url);
  if (mode instanceof Error) throw mode;
  url.searchParams.delete("sslmode");
  const verify = settings.ca !== undefined && mode === "require" ? "verify-ca" : mode;
  const ca = settings.ca !== undefined ? { ca: settings.ca } : {};
  const ssl = verify === "disable"
    ? false
    : verify === "allow" || verify === "prefer"
    ? "prefer" as const
    : verify === "require"
    ? "require" as const
    : verify === "verify-ca"
    // The chain is checked, the name is not (libpq's verify-ca).
    ? { rejectUnauthorized: true, checkServerIdentity: () => undefined, ...ca }
    : { rejectUnauthorized: true, ...ca };
  return {
    url: url.toString(),
    options: {
      max: settings.pool,
      connect_timeout: Math.max(1, Math.ceil(settings.connectTimeoutMs / 1_000)),
      idle_timeout: 300,
      ssl,
      // Notices (a table that already exists) are not the operator's business.
      onnotice: () => {},
      connection: {
        application_name: "gatehouse",
        statement_timeout: settings.statementTimeoutMs,
      },
    },
  };
}

/** Connection failures of the client and of the socket under it. */
const CONNECTION_CODES = new Set([
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EPIPE",
]);

/**
 * SQLSTATEs of a server that cannot serve now: class 08 (connection exception), 53300 (too many
 * connections), 57014 (the statement timeout cut a statement), 57P01–57P05 (shutting down,
 * starting up), 40001/40P01 once retries are spent (contention).
 */
function unavailableState(code: string): boolean {
  return code.startsWith("08") || code === "53300" || code === "57014" ||
    /^57P0[1-5]$/.test(code) || code === "40001" || code === "40P01";
}

/** Whether `error` means the database cannot be reached or cannot answer now. */
export function isUnavailable(error: unknown): boolean {
  if (error instanceof Deno.errors.ConnectionRefused) return true;
  if (error instanceof Deno.errors.ConnectionReset) return true;
  if (error instanceof Deno.errors.TimedOut) return true;
  if (error instanceof Deno.errors.BrokenPipe) return true;
  const code = String((error as { code?: unknown })?.code ?? "");
  return CONNECTION_CODES.has(code) || unavailableState(code);
}

/**
 * A message for `error` that is safe to log: its SQLSTATE or code and message, never the
 * query's parameters (the client keeps them on the error) nor the connection string.
 */
export function describeFailure(error: unknown, storage: string): string {
  const code = (error as { code?: unknown })?.code;
  const message = error instanceof Error ? error.message : String(error);
  const url = parseUrl(storage);
  const redacted = url.password ? message.replaceAll(url.password, "***") : message;
  return `${code ? `${code}: ` : ""}${redacted} (${showStorage(storage)})`;
}
