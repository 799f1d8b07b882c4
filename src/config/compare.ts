/** Whether two resolved values are the same configuration, secrets compared by their value. */
import { Secret } from "../core/secret.ts";

export function sameConfig(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a instanceof Secret || b instanceof Secret) {
    return a instanceof Secret && b instanceof Secret && a.reveal() === b.reveal();
  }
  if (a instanceof Map || b instanceof Map) {
    return a instanceof Map && b instanceof Map && a.size === b.size &&
      [...a].every(([key, value]) => b.has(key) && sameConfig(value, b.get(key)));
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length &&
      a.every((item, i) => sameConfig(item, b[i]));
  }
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  const keysA = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const keysB = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return keysA.length === keysB.length &&
    keysA.every((key) =>
      sameConfig((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])
    );
}
