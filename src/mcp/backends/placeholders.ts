/**
 * Fills the per-session placeholders `{{user.id}}`, `{{user.email}}`, `{{user.groups}}`,
 * `{{user.token}}`.
 */
import { headerSafe } from "../../core/header_safe.ts";

export interface PlaceholderValues {
  "user.id": string;
  "user.email"?: string;
  /** The person's groups, comma-separated, each name made safe for a header (header_safe.ts). */
  "user.groups"?: string;
  "user.token"?: string;
}

const PLACEHOLDER = /\{\{\s*(user\.(?:id|email|groups|token))\s*\}\}/g;

/** `{{user.groups}}`'s value: every name made safe, joined with commas. */
export function groupsValue(groups: readonly string[] | undefined): string {
  return (groups ?? []).map(headerSafe).join(",");
}

/**
 * The values as a header carries them (`headers:`): the id and email header-safe as the
 * identity headers are (a provider's subject or an address may hold a byte a header cannot,
 * and fetch refuses such a header: the backend could not be reached at all). The groups are
 * already; a token is sent as given.
 */
export function headerValues(values: PlaceholderValues): PlaceholderValues {
  return {
    ...values,
    "user.id": headerSafe(values["user.id"]),
    ...(values["user.email"] !== undefined && { "user.email": headerSafe(values["user.email"]) }),
  };
}

export function fillPlaceholders(
  text: string,
  values: PlaceholderValues,
  encode: (value: string) => string = (value) => value,
): string {
  return text.replace(
    PLACEHOLDER,
    (_, name: keyof PlaceholderValues) => encode(values[name] ?? ""),
  );
}

export function fillRecord(
  record: Record<string, string>,
  values: PlaceholderValues,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(record).map(([key, text]) => [key, fillPlaceholders(text, values)]),
  );
}
