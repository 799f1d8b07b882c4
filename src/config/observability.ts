/**
 * `logLevel:`, `audit:` and `metrics:`: what the gateway tells its operators about itself, and
 * who may read its metrics.
 */
import { Secret } from "../core/secret.ts";
import { parseListen } from "./addresses.ts";
import { Checker, describe } from "./checker.ts";
import type { LogLevel, ResolvedConfig } from "./types.ts";

const LOG_LEVELS = ["debug", "info", "warn", "error"];

export function parseLogLevel(c: Checker, value: unknown): LogLevel {
  const logLevel = value ?? "info";
  if (!LOG_LEVELS.includes(logLevel as string)) {
    c.fail(["logLevel"], `unknown level ${describe(logLevel)}`, "one of: debug, info, warn, error");
  }
  return logLevel as LogLevel;
}

export function parseAudit(c: Checker, value: unknown): ResolvedConfig["audit"] {
  const raw = c.object(value, ["audit"], ["enabled", "arguments"]) ?? {};
  return {
    enabled: c.boolean(raw.enabled, ["audit", "enabled"], true),
    arguments: c.boolean(raw.arguments, ["audit", "arguments"], false),
  };
}

export function parseMetrics(c: Checker, value: unknown): ResolvedConfig["metrics"] {
  const raw = c.object(value, ["metrics"], ["token", "listen"]) ?? {};
  const token = c.optionalString(raw.token, ["metrics", "token"]);
  if (token !== undefined && token.length < 16) {
    c.fail(["metrics", "token"], "is shorter than 16 characters", "e.g. ${METRICS_TOKEN}");
  }
  return {
    token: token === undefined ? undefined : new Secret(token),
    listen: raw.listen === undefined
      ? undefined
      : parseListen(c, raw.listen, ["metrics", "listen"]),
  };
}
