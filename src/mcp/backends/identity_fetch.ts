/**
 * The fetch under an HTTP backend that is told who calls (`identity:`, docs/identity.md): every
 * request it sends (POSTs, GET streams, DELETEs, of either revision, an aggregate's members
 * alike) carries the identity headers of the session's person, set over anything of those names,
 * so a value a client sent can never pass for the gateway's. The values come from `source` per
 * request: a signed assertion is renewed as it ages.
 */

/** The identity headers for one request, by lower-case name. */
export type IdentitySource = () => Record<string, string> | Promise<Record<string, string>>;

/**
 * Every header name of identity to backends; none of them is ever taken from a client (only
 * configured headers reach a backend) and each is set by the gateway alone.
 */
export const IDENTITY_HEADER_NAMES = [
  "x-gatehouse-user",
  "x-gatehouse-email",
  "x-gatehouse-groups",
  "x-gatehouse-client",
  "x-gatehouse-assertion",
] as const;

export function identityFetch(
  baseFetch: typeof globalThis.fetch,
  source: IdentitySource,
): typeof globalThis.fetch {
  return async (input, init) => {
    const identity = await source();
    const given = init?.headers;
    if (given instanceof Headers || Array.isArray(given) || !given) {
      const merged = new Headers(given);
      for (const name of IDENTITY_HEADER_NAMES) merged.delete(name);
      for (const [name, value] of Object.entries(identity)) merged.set(name, value);
      return baseFetch(input, { ...init, headers: merged });
    }
    // A plain record, as legacy_http.ts sends: copied, the identity's names replacing any
    // configured under another spelling.
    const record: Record<string, string> = {};
    for (const [name, value] of Object.entries(given)) {
      if (!(IDENTITY_HEADER_NAMES as readonly string[]).includes(name.toLowerCase())) {
        record[name] = value;
      }
    }
    return baseFetch(input, { ...init, headers: { ...record, ...identity } });
  };
}
