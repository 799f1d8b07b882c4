/**
 * Reading JSON that the other side of a translation wrote: plain objects told apart from
 * arrays and null, shallow copies with some keys left out, `params._meta` read and written,
 * and one canonical text of a value (for digests). Nothing here knows a protocol revision.
 */

export type Json = Record<string, unknown>;

/** A JSON object: not null, not an array. */
export function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A shallow copy of `object` without `keys`. Built key by key rather than copied and then
 * deleted from: V8 turns an object it deletes from into a slow dictionary, and this runs on
 * messages the gateway then serializes, per request.
 */
export function without(object: Json, keys: readonly string[]): Json {
  const copy: Json = {};
  for (const key of Object.keys(object)) {
    if (!keys.includes(key)) copy[key] = object[key];
  }
  return copy;
}

/** `params._meta` when it is an object. */
export function metaOf(params: unknown): Json | undefined {
  return isObject(params) && isObject(params._meta) ? params._meta : undefined;
}

/**
 * `params` (copied) with `_meta` replaced; an empty `_meta` is left out, so a translation that
 * removed every key it added leaves no trace.
 */
export function withMeta(params: Json, meta: Json): Json {
  const copy = without(params, ["_meta"]);
  if (Object.keys(meta).length > 0) copy._meta = meta;
  return copy;
}

/** An array or object `canonicalJson` is inside of, and how far it has written it. */
interface Open {
  value: unknown[] | Json;
  /** The object's keys, sorted, without those of undefined values; undefined for an array. */
  keys?: string[];
  next: number;
}

/**
 * JSON text with the keys of every object sorted, so two values that differ only in key order
 * give the same text (and the same digest). Written with a stack of its own, not by recursion:
 * a value of any depth (a backend's tool definition, say) cannot overflow the call stack.
 */
export function canonicalJson(value: unknown): string {
  const parts: string[] = [];
  const open: Open[] = [];
  /** Writes a value: a primitive whole, an array or object its opening (the rest follows). */
  const begin = (item: unknown) => {
    if (Array.isArray(item)) {
      parts.push("[");
      open.push({ value: item, next: 0 });
    } else if (isObject(item)) {
      parts.push("{");
      const keys = Object.keys(item).sort().filter((key) => item[key] !== undefined);
      open.push({ value: item, keys, next: 0 });
    } else parts.push(JSON.stringify(item) ?? "null");
  };
  begin(value);
  while (open.length > 0) {
    const top = open[open.length - 1];
    const length = top.keys ? top.keys.length : (top.value as unknown[]).length;
    if (top.next === length) {
      parts.push(top.keys ? "}" : "]");
      open.pop();
      continue;
    }
    if (top.next > 0) parts.push(",");
    const at = top.next++;
    if (top.keys) {
      parts.push(`${JSON.stringify(top.keys[at])}:`);
      begin((top.value as Json)[top.keys[at]]);
    } else begin((top.value as unknown[])[at]);
  }
  return parts.join("");
}
