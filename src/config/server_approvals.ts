/**
 * A server's `approvals:`: which tool calls wait for a person's yes (tools as `tools:` rules
 * write them, optionally only those annotated destructive), who gives it (the caller, or named
 * people never the caller), how long a call waits, and a webhook told that one waits.
 */
import { type Checker, describe } from "./checker.ts";
import type { ConfigPath } from "./issues.ts";
import { type GroupSpelling, parseGroupList, parsePatterns } from "./server_access.ts";
import type { ApprovalRule, ApproverRule } from "./approval_types.ts";

const RULE_KEYS = ["tools", "when", "by", "timeout", "notify"];
const BY_KEYS = ["emails", "groups"];
export const DEFAULT_APPROVAL_TIMEOUT_MS = 10 * 60_000;
/** A held call waits at most a day: its record, and the person's count, must end. */
const MAX_TIMEOUT_MS = 24 * 60 * 60_000;

/** `approvals:`: undefined when absent or empty (nothing is held). */
export function parseApprovals(
  c: Checker,
  value: unknown,
  path: ConfigPath,
  spelling: GroupSpelling,
  oauthConfigured: boolean,
): ApprovalRule[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) {
    c.fail(
      path,
      `expected a list, got ${describe(value)}`,
      'write [{ tools: ["delete_*"], by: caller }]',
    );
    return undefined;
  }
  if (value.length > 0 && !oauthConfigured) {
    c.fail(
      path,
      "needs oauth: (people sign in to Gatehouse's page to approve a held call)",
      "configure oauth:, or remove approvals:",
    );
  }
  const rules: ApprovalRule[] = [];
  value.forEach((entry, i) => {
    const at = [...path, i];
    const raw = c.object(entry, at, RULE_KEYS);
    if (!raw) return;
    const tools = raw.tools === undefined ? ["*"] : parsePatterns(c, raw.tools, [...at, "tools"]);
    if (tools.length === 0) c.fail([...at, "tools"], "names no tool", 'write e.g. ["delete_*"]');
    if (raw.when !== undefined && raw.when !== "destructive") {
      c.fail([...at, "when"], `unknown condition ${describe(raw.when)}`, "write when: destructive");
    }
    const by = parseBy(c, raw.by, [...at, "by"], spelling);
    const timeoutMs = c.duration(raw.timeout, [...at, "timeout"], DEFAULT_APPROVAL_TIMEOUT_MS);
    if (timeoutMs > MAX_TIMEOUT_MS) {
      c.fail([...at, "timeout"], "is longer than a day", "a held call waits at most 24h");
    }
    const notify = raw.notify === undefined ? undefined : c.httpsUrl(raw.notify, [...at, "notify"]);
    if (!by) return;
    rules.push({
      tools,
      destructiveOnly: raw.when === "destructive",
      by,
      timeoutMs,
      ...(notify && { notify }),
    });
  });
  return rules.length ? rules : undefined;
}

function parseBy(
  c: Checker,
  value: unknown,
  path: ConfigPath,
  spelling: GroupSpelling,
): ApproverRule | undefined {
  if (value === "caller") return "caller";
  const hint = "write by: caller, or by: { groups: [release-managers] } or { emails: [...] }";
  if (value === undefined) return c.fail(path, "is required", hint);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return c.fail(path, `expected caller or a mapping, got ${describe(value)}`, hint);
  }
  const raw = c.object(value, path, BY_KEYS);
  if (!raw) return undefined;
  const emails = c.stringList(raw.emails, [...path, "emails"]).map((e) => e.trim().toLowerCase());
  const groups = parseGroupList(c, raw.groups, [...path, "groups"], spelling);
  if (!emails.length && !groups.length) return c.fail(path, "names nobody", hint);
  return { emails, groups };
}
