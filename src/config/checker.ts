/**
 * The collecting validator: each check records an issue with its path and a hint and returns
 * a fallback, so one pass over the document reports every problem at once.
 */
import { isLoopbackHttp } from "../core/loopback.ts";
import { parseDuration, parseSize } from "../core/units.ts";
import type { ConfigIssue, ConfigPath } from "./issues.ts";

const PLACEHOLDER = /\{\{\s*([^}]*?)\s*\}\}/g;
const KNOWN_PLACEHOLDERS = new Set(["user.id", "user.email", "user.groups", "user.token"]);

export type Dict = Record<string, unknown>;

export class Checker {
  readonly issues: ConfigIssue[] = [];
  /** Allowed, but worth a person's second look: reported, never refused. */
  readonly warnings: ConfigIssue[] = [];

  fail(path: ConfigPath, message: string, hint?: string): undefined {
    this.issues.push({ path, message, hint });
    return undefined;
  }

  warn(path: ConfigPath, message: string, hint?: string): void {
    this.warnings.push({ path, message, hint });
  }

  /** A mapping; `allowed` lists its keys, or "any" for free-form maps (env, headers). */
  object(value: unknown, path: ConfigPath, allowed: string[] | "any"): Dict | undefined {
    if (value === undefined || value === null) return {};
    if (typeof value !== "object" || Array.isArray(value)) {
      return this.fail(path, `expected a mapping, got ${describe(value)}`);
    }
    if (allowed === "any") return value as Dict;
    for (const key of Object.keys(value)) {
      if (!allowed.includes(key)) {
        const guess = closest(key, allowed);
        this.fail(
          [...path, key],
          `unknown key "${key}"`,
          guess ? `did you mean "${guess}"?` : `allowed here: ${allowed.join(", ")}`,
        );
      }
    }
    return value as Dict;
  }

  string(value: unknown, path: ConfigPath, hint?: string): string | undefined {
    if (typeof value === "string" && value.length > 0) return value;
    if (value === undefined) return this.fail(path, "is required", hint);
    return this.fail(path, `expected a non-empty string, got ${describe(value)}`, hint);
  }

  optionalString(value: unknown, path: ConfigPath): string | undefined {
    return value === undefined ? undefined : this.string(value, path);
  }

  boolean(value: unknown, path: ConfigPath, fallback: boolean): boolean {
    if (value === undefined) return fallback;
    if (typeof value === "boolean") return value;
    this.fail(path, `expected true or false, got ${describe(value)}`);
    return fallback;
  }

  positiveInteger(value: unknown, path: ConfigPath, fallback: number): number {
    if (value === undefined) return fallback;
    if (typeof value === "number" && Number.isInteger(value) && value > 0) return value;
    this.fail(path, `expected a whole number above 0, got ${describe(value)}`);
    return fallback;
  }

  duration(value: unknown, path: ConfigPath, fallback: number): number {
    if (value === undefined) return fallback;
    const ms = typeof value === "string" ? parseDuration(value) : undefined;
    if (ms !== undefined && ms > 0) return ms;
    this.fail(path, `expected a duration, got ${describe(value)}`, 'write e.g. "30s", "5m", "1h"');
    return fallback;
  }

  size(value: unknown, path: ConfigPath, fallback: number): number {
    if (value === undefined) return fallback;
    const bytes = typeof value === "string"
      ? parseSize(value)
      : typeof value === "number" && Number.isInteger(value)
      ? value
      : undefined;
    if (bytes !== undefined && bytes > 0) return bytes;
    this.fail(path, `expected a size, got ${describe(value)}`, 'write e.g. "512KiB", "4MiB"');
    return fallback;
  }

  /** An https URL; plain http only to this machine (tests, local development). */
  httpsUrl(value: unknown, path: ConfigPath, hint?: string): string | undefined {
    const text = this.string(value, path);
    if (text === undefined) return undefined;
    try {
      const url = new URL(text);
      if (url.protocol === "https:" || isLoopbackHttp(url)) return text;
      this.fail(path, "must be an https URL", hint ?? "http is accepted for localhost only");
    } catch {
      this.fail(path, `not a URL: ${describe(text)}`);
    }
    return undefined;
  }

  stringList(value: unknown, path: ConfigPath): string[] {
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) {
      this.fail(path, `expected a list, got ${describe(value)}`);
      return [];
    }
    const out: string[] = [];
    value.forEach((item, i) => {
      if (typeof item === "string" || typeof item === "number") out.push(String(item));
      else this.fail([...path, i], `expected a string, got ${describe(item)}`);
    });
    return out;
  }

  stringMap(value: unknown, path: ConfigPath): Record<string, string> {
    const dict = this.object(value, path, "any");
    const out: Record<string, string> = {};
    if (!dict) return out;
    for (const [key, item] of Object.entries(dict)) {
      if (typeof item === "string" || typeof item === "number" || typeof item === "boolean") {
        out[key] = String(item);
      } else this.fail([...path, key], `expected a string, got ${describe(item)}`);
    }
    return out;
  }

  placeholders(text: string, path: ConfigPath): void {
    for (const match of text.matchAll(PLACEHOLDER)) {
      if (!KNOWN_PLACEHOLDERS.has(match[1])) {
        this.fail(
          path,
          `unknown placeholder "${match[0]}"`,
          "available: {{user.id}}, {{user.email}}, {{user.groups}}, {{user.token}}",
        );
      }
    }
  }
}

export function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  if (typeof value === "string") return `"${value.length > 40 ? value.slice(0, 40) + "…" : value}"`;
  return `${typeof value} ${String(value)}`;
}

/** The allowed key nearest to a misspelt one, if any is near enough to suggest. */
export function closest(word: string, candidates: string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1;
  for (const candidate of candidates) {
    const d = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j] + 1,
        current[j - 1] + 1,
        previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length];
}
