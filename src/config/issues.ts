/**
 * What validation found wrong, collected in full before the gateway refuses to start; and what
 * it found risky but allowed (warnings), which `check` prints and start-up logs.
 */
import { GatehouseError } from "../core/errors.ts";

export type ConfigPath = (string | number)[];

export interface ConfigIssue {
  path: ConfigPath;
  message: string;
  hint?: string;
  /** 1-based line in the YAML file, filled in by the loader when the file is known. */
  line?: number;
}

export class ConfigError extends GatehouseError<"config_invalid"> {
  constructor(readonly issues: ConfigIssue[], readonly file?: string) {
    super("config_invalid", formatIssues(issues, file));
  }
}

export function formatPath(path: ConfigPath): string {
  if (path.length === 0) return "(top level)";
  return path.map((part, i) => typeof part === "number" ? `[${part}]` : (i ? "." : "") + part)
    .join("");
}

export function formatIssues(
  issues: ConfigIssue[],
  file?: string,
  kind: "error" | "warning" = "error",
): string {
  const head = `${file ?? "configuration"}: ${issues.length} ${kind}${
    issues.length === 1 ? "" : "s"
  }`;
  // In the file's order (a stable sort: issues of one line keep the order they were found in).
  const lines = issues.toSorted((a, b) => (a.line ?? 0) - (b.line ?? 0)).map((issue) => {
    const where = `${file ?? ""}${issue.line ? `:${issue.line}` : ""}`;
    const at = where ? `${where} ` : "";
    const hint = issue.hint ? `\n    hint: ${issue.hint}` : "";
    return `  ${at}${formatPath(issue.path)}: ${issue.message}${hint}`;
  });
  return [head, ...lines].join("\n");
}
