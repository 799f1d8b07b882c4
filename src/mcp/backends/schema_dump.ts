/**
 * Backends built on the MCP SDK answer a request that fails the SDK's schema with an error whose
 * message is the schema library's issue list, serialised as pretty-printed JSON (a ZodError's
 * `message`). This turns such a message into one sentence a person can act on.
 */

interface Issue {
  path: (string | number)[];
  message: string;
}

/** The one-sentence form of a schema-library dump; undefined when `message` is not one. */
export function describeSchemaDump(message: string): string | undefined {
  if (!message.startsWith("[")) return undefined;
  let issues: unknown;
  try {
    issues = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (!Array.isArray(issues) || issues.length === 0 || !issues.every(isIssue)) return undefined;
  const [first] = issues as Issue[];
  const at = first.path.length > 0 ? ` at ${formatPath(first.path)}` : "";
  const more = issues.length > 1
    ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? "s" : ""})`
    : "";
  return `the backend found the request invalid${at}: ${first.message}${more}`;
}

function isIssue(value: unknown): value is Issue {
  if (typeof value !== "object" || value === null) return false;
  const issue = value as Record<string, unknown>;
  return typeof issue.code === "string" && typeof issue.message === "string" &&
    Array.isArray(issue.path) &&
    issue.path.every((part) => typeof part === "string" || typeof part === "number");
}

/** `["params", "items", 0, "uri"]` → `params.items[0].uri` */
function formatPath(path: (string | number)[]): string {
  return path.map((part, i) => typeof part === "number" ? `[${part}]` : i === 0 ? part : `.${part}`)
    .join("");
}
