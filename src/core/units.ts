/** Parsing of the human units the configuration uses: durations (`30s`) and sizes (`4MiB`). */

const DURATION_UNITS_MS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const SIZE_UNITS_BYTES: Record<string, number> = {
  B: 1,
  KB: 1_000,
  MB: 1_000_000,
  GB: 1_000_000_000,
  KiB: 1_024,
  MiB: 1_048_576,
  GiB: 1_073_741_824,
};

/** `"30s"` → 30000. Returns undefined for anything that is not `<number><unit>`. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/.exec(text.trim());
  if (!match) return undefined;
  return Math.round(Number(match[1]) * DURATION_UNITS_MS[match[2]]);
}

/** `"4MiB"` → 4194304. Returns undefined for anything that is not `<number><unit>`. */
export function parseSize(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|KiB|MiB|GiB)$/.exec(text.trim());
  if (!match) return undefined;
  return Math.round(Number(match[1]) * SIZE_UNITS_BYTES[match[2]]);
}

/** A rate: `count` events per `perMs` milliseconds. */
export interface Rate {
  count: number;
  perMs: number;
}

const RATE_UNITS_MS: Record<string, number> = {
  s: 1_000,
  sec: 1_000,
  second: 1_000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  h: 3_600_000,
  hour: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
};

/** `"600/min"` → { count: 600, perMs: 60000 }; also `/s`, `/h`, `/day`. */
export function parseRate(text: string): Rate | undefined {
  const match = /^(\d+)\s*\/\s*([a-z]+)$/.exec(text.trim());
  if (!match || !(match[2] in RATE_UNITS_MS) || Number(match[1]) < 1) return undefined;
  return { count: Number(match[1]), perMs: RATE_UNITS_MS[match[2]] };
}
