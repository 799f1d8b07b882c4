/**
 * Structured logging: one JSON object per line on stderr. Callers pass fields, never
 * preformatted strings, so nothing secret slips in through interpolation; fields whose names
 * look like they carry a secret are redacted as a second line of defence.
 */
import type { LogLevel } from "../config/types.ts";
import { type Clock, systemClock } from "../core/clock.ts";

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const SECRET_FIELD = /token|secret|password|authorization|cookie|code|key/i;

/** Hides values of secret-looking fields; an Error becomes its name and message. */
export function redact(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const key in fields) out[key] = redactValue(key, fields[key]);
  return out;
}

/** Field names seen, and whether each looks secret: the same few names come on every line. */
const secretLooking = new Map<string, boolean>();

function looksSecret(key: string): boolean {
  let secret = secretLooking.get(key);
  if (secret === undefined) {
    // Names come from the code, not from requests; the bound is only a backstop.
    if (secretLooking.size >= 1024) secretLooking.clear();
    secretLooking.set(key, secret = SECRET_FIELD.test(key));
  }
  return secret;
}

function redactValue(key: string, value: unknown): unknown {
  if (typeof value === "string") return looksSecret(key) ? "***" : value;
  return value instanceof Error ? { name: value.name, message: value.message } : value;
}

export interface LoggerOptions {
  /** The clock the lines' `time` is read from. */
  clock?: Clock;
}

export function createLogger(
  level: LogLevel,
  write: (line: string) => void = (line) => console.error(line),
  options: LoggerOptions = {},
): Logger {
  return build(level, write, {}, isoStamper(options.clock ?? systemClock));
}

function build(
  level: LogLevel,
  write: (line: string) => void,
  base: LogFields,
  isoNow: () => string,
): Logger {
  const threshold = LEVELS[level];
  const emit = (at: LogLevel, message: string, fields?: LogFields) => {
    if (LEVELS[at] < threshold) return;
    const record: LogFields = { time: isoNow(), level: at, msg: message };
    for (const key in base) record[key] = base[key];
    if (fields) { for (const key in fields) record[key] = redactValue(key, fields[key]); }
    // No replacer: JSON.stringify with one is several times slower, and this runs per call.
    write(JSON.stringify(record));
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    child: (fields) => build(level, write, { ...base, ...redact(fields) }, isoNow),
  };
}

/**
 * The clock's time as ISO 8601, formatted once per millisecond: formatting costs more than a
 * line. One per logger and its children.
 */
function isoStamper(clock: Clock): () => string {
  let stampedAt = NaN;
  let stamp = "";
  return () => {
    const now = clock.now();
    if (now !== stampedAt) {
      stampedAt = now;
      stamp = new Date(now).toISOString();
    }
    return stamp;
  };
}

/** A logger that drops everything, for tests that do not look at logs. */
export const silentLogger: Logger = createLogger("error", () => {});
