/** Fills the per-session placeholders `{{user.id}}`, `{{user.email}}`, `{{user.token}}`. */

export interface PlaceholderValues {
  "user.id": string;
  "user.email"?: string;
  "user.token"?: string;
}

const PLACEHOLDER = /\{\{\s*(user\.(?:id|email|token))\s*\}\}/g;

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
