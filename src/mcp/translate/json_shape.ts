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

/**
 * JSON text with the keys of every object sorted, so two values that differ only in key order
 * give the same text (and the same digest).
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (isObject(value)) {
    const entries = Object.keys(value).sort()
      .filter((key) => value[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
