/** The `rateLimits:` section: how fast each kind of caller may go, or `off`. */
import { parseRate, type Rate } from "../core/units.ts";
import { type Checker, describe } from "./checker.ts";
import type { RateLimitConfig } from "./types.ts";

/**
 * Generous for people and their agents, tight for what only attackers do fast. Per-client
 * limits key a metadata-document client (one URL shared by everyone using that app) together
 * with the person or address, so a whole company is not one bucket.
 */
export const DEFAULT_RATE_LIMITS: Record<keyof RateLimitConfig, string> = {
  mcpPerUser: "1200/min",
  mcpPerClient: "3000/min",
  oauthPerAddress: "300/min",
  tokenPerClient: "120/min",
  tokenFailuresPerAddress: "20/min",
  registerPerAddress: "60/hour",
};

const KEYS = Object.keys(DEFAULT_RATE_LIMITS) as (keyof RateLimitConfig)[];

export function parseRateLimits(c: Checker, value: unknown): RateLimitConfig {
  const raw = c.object(value, ["rateLimits"], KEYS) ?? {};
  const config: RateLimitConfig = {};
  for (const key of KEYS) {
    const given = raw[key] ?? DEFAULT_RATE_LIMITS[key];
    if (given === "off" || given === false) continue;
    const rate: Rate | undefined = typeof given === "string" ? parseRate(given) : undefined;
    if (!rate) {
      c.fail(
        ["rateLimits", key],
        `expected a rate, got ${describe(given)}`,
        'write e.g. "600/min", "20/s", "100/hour", or off',
      );
      continue;
    }
    config[key] = rate;
  }
  return config;
}
