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
  return new JsonLogger(
    { threshold: LEVELS[level], write, isoNow: isoStamper(options.clock ?? systemClock) },
    {},
  );
}

/** What a logger and all its children share. */
interface LogSink {
  threshold: number;
  write: (line: string) => void;
  isoNow: () => string;
}

/**
 * One object per logger, its methods on the prototype: every session has a child of its own,
 * and a logger made of closures cost about 0.4 KiB more per child.
 */
class JsonLogger implements Logger {
  constructor(private readonly sink: LogSink, private readonly base: LogFields) {}

  debug(message: string, fields?: LogFields): void {
    this.#emit("debug", message, fields);
  }
  info(message: string, fields?: LogFields): void {
    this.#emit("info", message, fields);
  }
  warn(message: string, fields?: LogFields): void {
    this.#emit("warn", message, fields);
  }
  error(message: string, fields?: LogFields): void {
    this.#emit("error", message, fields);
  }
  child(fields: LogFields): Logger {
    return new JsonLogger(this.sink, { ...this.base, ...redact(fields) });
  }

  #emit(at: LogLevel, message: string, fields?: LogFields): void {
    if (LEVELS[at] < this.sink.threshold) return;
    const record: LogFields = { time: this.sink.isoNow(), level: at, msg: message };
    const base = this.base;
    for (const key in base) record[key] = base[key];
    if (fields) { for (const key in fields) record[key] = redactValue(key, fields[key]); }
    // No replacer: JSON.stringify with one is several times slower, and this runs per call.
    this.sink.write(JSON.stringify(record));
  }
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
