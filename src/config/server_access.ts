/**
 * Who may use a server and which of its tools: `access:` (emails, domains, groups; any one
 * admits) and `tools:` (allow, deny and rules, as glob patterns). Each is checked alone here;
 * `checkAccessSources` then looks at every server at once, for rules that can never match
 * (groups no caller can bring, service tokens no rule admits).
 */
import type { ServerName } from "../core/ids.ts";
import { type Checker, describe } from "./checker.ts";
import type { ConfigPath } from "./issues.ts";
import type { AccessRule, ServerConfig, ToolPolicy, ToolRule } from "./types.ts";

/** How groups are written where they are compared (GitHub's are lower-cased at sign-in). */
export interface GroupSpelling {
  lowerCase: boolean;
}

const ACCESS_KEYS = ["emails", "domains", "groups"];
/** `pinned` belongs to tool integrity (tool_changes.ts), read beside the policy. */
const TOOLS_KEYS = ["allow", "deny", "rules", "pinned"];
const RULE_KEYS = ["tools", "access"];
/**
 * What a tool pattern may hold: any character a tool name may, plus `*` and `?`. Brackets,
 * braces, alternation and anchors are refused, since they would read as a regular expression
 * or a shell glob and silently match nothing.
 */
const PATTERN = /^[^\s[\]{}()|^$+\\!]{1,256}$/;
const DOMAIN = /^[a-z0-9.-]+\.[a-z]{2,}$/;
const EMAIL = /^[^@\s]+@[^@\s]+$/;

export function parseGroupList(
  c: Checker,
  value: unknown,
  path: ConfigPath,
  spelling: GroupSpelling,
): string[] {
  return c.stringList(value, path).map((raw, i) => {
    const group = raw.trim();
    if (group === "") c.fail([...path, i], "is empty", "give a group name");
    return spelling.lowerCase ? group.toLowerCase() : group;
  });
}

/** `access:` (of a server, or of a tool rule): absent is undefined, empty is an error. */
export function parseAccess(
  c: Checker,
  value: unknown,
  path: ConfigPath,
  spelling: GroupSpelling,
): AccessRule | undefined {
  if (value === undefined) return undefined;
  const raw = c.object(value, path, ACCESS_KEYS);
  if (!raw) return undefined;
  const lower = (list: string[]) => list.map((item) => item.trim().toLowerCase());
  const rule: AccessRule = {
    emails: lower(c.stringList(raw.emails, [...path, "emails"])),
    domains: lower(c.stringList(raw.domains, [...path, "domains"])),
    groups: parseGroupList(c, raw.groups, [...path, "groups"], spelling),
  };
  rule.emails.forEach((email, i) => {
    if (!EMAIL.test(email)) {
      c.fail([...path, "emails", i], `not an email address: ${describe(email)}`);
    }
  });
  rule.domains.forEach((domain, i) => {
    if (!DOMAIN.test(domain)) {
      c.fail(
        [...path, "domains", i],
        `not a domain: ${describe(domain)}`,
        domain.startsWith("@") ? `write "${domain.slice(1)}", without the @` : 'e.g. "example.com"',
      );
    }
  });
  if (!rule.emails.length && !rule.domains.length && !rule.groups.length) {
    c.fail(
      path,
      "admits nobody",
      "list emails, domains or groups; or remove access: to admit everyone who may sign in",
    );
  }
  return rule;
}

/** Tool patterns as `tools:` rules write them (also `approvals:`). */
export function parsePatterns(c: Checker, value: unknown, path: ConfigPath): string[] {
  const patterns = c.stringList(value, path);
  patterns.forEach((pattern, i) => {
    if (!PATTERN.test(pattern)) {
      c.fail(
        [...path, i],
        `not a tool pattern: ${describe(pattern)}`,
        pattern.startsWith("!")
          ? "list the tools to hide under deny: instead"
          : "write a tool name, with * for any characters and ? for one (e.g. get_*); no spaces, brackets, braces or regular expressions",
      );
    }
  });
  return patterns;
}

/** `tools:`: undefined when it says nothing (every tool, for everyone). */
export function parseToolPolicy(
  c: Checker,
  value: unknown,
  path: ConfigPath,
  spelling: GroupSpelling,
): ToolPolicy | undefined {
  if (value === undefined) return undefined;
  const raw = c.object(value, path, TOOLS_KEYS);
  if (!raw) return undefined;
  const policy: ToolPolicy = {
    ...(raw.allow !== undefined && { allow: parsePatterns(c, raw.allow, [...path, "allow"]) }),
    deny: parsePatterns(c, raw.deny, [...path, "deny"]),
    rules: parseRules(c, raw.rules, [...path, "rules"], spelling),
  };
  if (policy.allow?.length === 0) {
    c.warn(
      [...path, "allow"],
      "allows no tool: callers see none",
      'list the tools to show (e.g. ["get_*"]), or remove allow: to show every tool not denied',
    );
  }
  const empty = policy.allow === undefined && !policy.deny.length && !policy.rules.length;
  return empty ? undefined : policy;
}

function parseRules(
  c: Checker,
  value: unknown,
  path: ConfigPath,
  spelling: GroupSpelling,
): ToolRule[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    c.fail(
      path,
      `expected a list, got ${describe(value)}`,
      "write [{ tools: [...], access: {...} }]",
    );
    return [];
  }
  const rules: ToolRule[] = [];
  value.forEach((item, i) => {
    const at = [...path, i];
    const raw = c.object(item, at, RULE_KEYS);
    if (!raw) return;
    const tools = parsePatterns(c, raw.tools, [...at, "tools"]);
    if (tools.length === 0) {
      c.fail([...at, "tools"], "names no tools", 'e.g. tools: ["write_*"]');
    }
    const access = raw.access === undefined
      ? c.fail(
        [...at, "access"],
        "is required",
        "say who may use these tools, e.g. { groups: [editors] }",
      )
      : parseAccess(c, raw.access, [...at, "access"], spelling);
    if (access) rules.push({ tools, access });
  });
  return rules;
}

/** Where callers' groups can come from, besides a server's own service credentials. */
export interface GroupSources {
  /** People's groups arrive at sign-in (GitHub, or an oidc/azure `groupsClaim`). */
  atSignIn: boolean;
}

/**
 * Checks that need every server: `access` on a public server (no caller to check), rules on
 * groups that no caller can bring (never matching), and service credentials that `access`
 * never admits (they have no email, only groups). A member of an aggregate also sees the
 * callers of the aggregate, so the aggregate's service credentials count for it.
 */
export function checkAccessSources(
  c: Checker,
  servers: Map<ServerName, ServerConfig>,
  sources: GroupSources,
): void {
  const viaAggregates = new Map<ServerName, ServerConfig[]>();
  for (const server of servers.values()) {
    if (server.transport !== "aggregate") continue;
    for (const member of server.members) {
      viaAggregates.set(member, [...(viaAggregates.get(member) ?? []), server]);
    }
  }
  for (const server of servers.values()) {
    const path: ConfigPath = ["servers", server.name];
    if (server.public && server.access) {
      c.fail(
        [...path, "access"],
        "a public server has no callers to check",
        "remove public: true and configure oauth: or serviceAuths:, or remove access:",
      );
    }
    const callers = [server, ...(viaAggregates.get(server.name) ?? [])];
    const tokenGroups = callers.some((s) => s.serviceAuths.some((auth) => auth.groups.length));
    if (!sources.atSignIn && !tokenGroups) warnUnreachableGroups(c, server, path);
    if (server.access) warnRefusedCredentials(c, server, server.access, path);
  }
}

function warnUnreachableGroups(c: Checker, server: ServerConfig, path: ConfigPath): void {
  const hint =
    "groups come from oauth.idp.groupsClaim (oidc, azure), GitHub's organisations and teams, or a serviceAuths entry's groups";
  if (server.access?.groups.length) {
    c.warn(
      [...path, "access", "groups"],
      "no caller can bring these groups, so they never admit",
      hint,
    );
  }
  server.tools?.rules.forEach((rule, i) => {
    if (rule.access.groups.length) {
      c.warn(
        [...path, "tools", "rules", i, "access", "groups"],
        "no caller can bring these groups, so they never admit",
        hint,
      );
    }
  });
}

/** A service credential stands for no email: only its groups can pass `access`. */
function warnRefusedCredentials(
  c: Checker,
  server: ServerConfig,
  access: AccessRule,
  path: ConfigPath,
): void {
  server.serviceAuths.forEach((auth, i) => {
    if (auth.groups.some((group) => access.groups.includes(group))) return;
    c.warn(
      [...path, "serviceAuths", i],
      "its callers pass no rule of this server's access, so they are refused",
      `give it groups: that access.groups lists${
        access.groups.length ? ` (${access.groups.join(", ")})` : ""
      }; service credentials have no email address`,
    );
  });
}
