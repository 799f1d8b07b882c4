/**
 * Groups as an identity provider states them, made safe to keep: a claim read leniently (a
 * list of strings, or one string), and the whole list bounded, so that a person in thousands
 * of directory groups cannot swell the SSO session and grant records that carry it.
 */
import type { IdpLog } from "./provider.ts";

/** At most this many groups are kept per person... */
export const MAX_GROUPS = 200;
/** ...and at most this many bytes of them (UTF-8): far below Deno KV's 64 KiB per value. */
export const MAX_GROUP_BYTES = 16 * 1024;

/**
 * The groups in a claim's value: a list of strings, or one string as one group. Undefined when
 * the claim is absent (so the caller may look elsewhere); an empty list, with a warning, when
 * it holds something else. Group names are kept as given: OIDC providers may tell case apart.
 */
export function readGroupsClaim(
  value: unknown,
  claim: string,
  subject: string,
  log: IdpLog,
): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) {
    const names = value.filter((item): item is string => typeof item === "string");
    if (names.length < value.length) {
      log.warn("entries of the groups claim that are not strings are ignored", {
        claim,
        subject,
        ignored: value.length - names.length,
      });
    }
    return names;
  }
  log.warn(
    "the groups claim is neither a list of strings nor a string; sign-in proceeds without groups",
    {
      claim,
      subject,
      type: typeof value,
    },
  );
  return [];
}

/** Distinct, non-empty names, the first MAX_GROUPS within MAX_GROUP_BYTES; a warning past them. */
export function boundGroups(groups: readonly string[], subject: string, log: IdpLog): string[] {
  const kept: string[] = [];
  const seen = new Set<string>();
  const encoder = new TextEncoder();
  let bytes = 0;
  let dropped = 0;
  for (const group of groups) {
    if (group === "" || seen.has(group)) continue;
    seen.add(group);
    const size = encoder.encode(group).length;
    if (kept.length >= MAX_GROUPS || bytes + size > MAX_GROUP_BYTES) {
      dropped++;
      continue;
    }
    kept.push(group);
    bytes += size;
  }
  if (dropped > 0) {
    log.warn("the person belongs to more groups than the gateway keeps; the rest are ignored", {
      subject,
      kept: kept.length,
      dropped,
      hint:
        `at most ${MAX_GROUPS} groups and ${MAX_GROUP_BYTES} bytes are kept; have the identity provider send only the groups the gateway's rules name`,
    });
  }
  return kept;
}
