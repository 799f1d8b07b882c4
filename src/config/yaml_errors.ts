/**
 * What a configuration that is not valid YAML is told. The parser reports every token it could
 * not place after the first mistake (an unquoted `{{user.token}}` in a flow mapping made 65
 * errors of one line), so only the first is shown, with its line; and the most common cause, a
 * `{{…}}` placeholder left unquoted, gets a hint of its own wherever it is the culprit.
 */
import type { LineCounter, YAMLError } from "yaml";
import type { ConfigIssue } from "./issues.ts";

export const UNQUOTED_BRACES_HINT =
  'quote a value with {{…}}, for example "Bearer {{user.token}}": unquoted, YAML reads { as the start of a mapping';

/** The first syntax error as one issue, or nothing when the text parsed. */
export function firstSyntaxIssue(
  errors: readonly YAMLError[],
  text: string,
  lines: LineCounter,
): ConfigIssue | undefined {
  const first = errors[0];
  if (!first) return undefined;
  const line = first.linePos?.[0].line ?? lines.linePos(first.pos[0]).line;
  const more = errors.length > 1
    ? ` (${errors.length - 1} more error${
      errors.length === 2 ? "" : "s"
    } after it, most of them from it: fix this one first)`
    : "";
  return {
    path: [],
    line,
    message: `YAML syntax: ${first.message.split("\n")[0]}${more}`,
    hint: hasUnquotedBraces(lineText(text, line))
      ? UNQUOTED_BRACES_HINT
      : "check indentation and quoting around this line",
  };
}

/**
 * A value that YAML read as a mapping where a string was expected, on a line with an unquoted
 * `{{`: `env: { TOKEN: {{user.token}} }` parses, as a mapping inside a mapping.
 */
export function hintUnquotedBraces(issue: ConfigIssue, text: string): void {
  if (issue.line === undefined || !/got a mapping/.test(issue.message)) return;
  if (hasUnquotedBraces(lineText(text, issue.line))) issue.hint = UNQUOTED_BRACES_HINT;
}

function lineText(text: string, line: number): string {
  return text.split("\n")[line - 1] ?? "";
}

/** `{{` outside quotes and before any comment on one line of YAML. */
export function hasUnquotedBraces(line: string): boolean {
  const bare = line
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'/g, "")
    .replace(/(^|\s)#.*$/, "");
  return bare.includes("{{");
}
