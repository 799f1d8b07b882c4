/**
 * Who may use a server and which of its tools, from the server's `access:` and `tools:`,
 * compiled once per configuration into checks cheap enough for every call. Pure: no I/O.
 *
 * Access (of a server, or of a tool rule): any one entry admits.
 * - `emails`: the caller's email address, lower-cased, is listed;
 * - `domains`: the part after its last "@" is listed, exactly (sub.example.com is not
 *   example.com);
 * - `groups`: one of the caller's groups is listed, compared exactly (the configuration
 *   lower-cases GitHub's, which arrive lower-cased).
 * A caller without an email address (a service token, a Basic user) passes by groups alone.
 * Absent `access`: everyone who got this far (signed in past `oauth.allow`, or holding one
 * of the server's own credentials).
 *
 * Tools (names as the caller sees them; an aggregate's are `member.tool`):
 * - `deny` wins over everything: a denied tool is for nobody;
 * - with `allow`, a tool it does not match is for nobody;
 * - a tool that one or more `rules` match is only for callers that every one of those rules
 *   admits (each rule narrows, none widens); a tool no rule matches is for every caller;
 * - absent `tools`: every tool for every caller.
 * `mayUseTool` does not repeat the server's own `access`: the request was refused before it
 * got here when that does not admit the caller.
 */
import type { AccessRule, ServerConfig, ToolPolicy } from "../config/types.ts";
import type { Identity } from "../core/identity.ts";
import type { ServerName } from "../core/ids.ts";
import { compileGlobs } from "./glob.ts";

/** Who is asking: a `Principal` fits, and `callerOfIdentity` makes one from a sign-in. */
export interface Caller {
  email?: string;
  groups?: readonly string[];
}

export interface ServerPolicy {
  readonly server: ServerName;
  /** Whether the server's `access` admits `caller` (always, without one). */
  admits(caller: Caller): boolean;
  /** Why `caller` may not use the server, as a sentence for the person; undefined: admitted. */
  refusal(caller: Caller): string | undefined;
  /** False when every tool is for every caller, so lists need no filtering at all. */
  readonly filtersTools: boolean;
  /** Whether `caller` may see and call the tool named `tool`. */
  mayUseTool(caller: Caller, tool: string): boolean;
  /**
   * The entries of a tools/list result's `tools` that `caller` may use, in their order; the
   * array itself when nothing is filtered. An entry without a string `name` is left out.
   */
  filterTools<T>(caller: Caller, tools: T[]): T[];
}

export type Policies = ReadonlyMap<ServerName, ServerPolicy>;

/** Every server's policy, compiled once (per configuration, on start and on each reload). */
export function compilePolicies(servers: Iterable<ServerConfig>): Policies {
  const policies = new Map<ServerName, ServerPolicy>();
  for (const server of servers) policies.set(server.name, compileServerPolicy(server));
  return policies;
}

/** A server's refusal of a caller: which server, and the sentence saying so. */
export interface Refusal {
  server: ServerName;
  reason: string;
}

/**
 * The first of `servers` whose `access:` refuses `caller` (for a grant naming several, one
 * refusal refuses it all); undefined when every one admits. A server no longer configured has
 * nothing left to guard, so it refuses no one (its tokens open nothing anyway).
 */
export function firstRefusal(
  policies: Policies,
  servers: readonly string[],
  caller: Caller,
): Refusal | undefined {
  for (const server of servers) {
    const reason = policies.get(server as ServerName)?.refusal(caller);
    if (reason) return { server: server as ServerName, reason };
  }
  return undefined;
}

/**
 * What a sign-in says about a person, as access rules see it: the email address only when the
 * provider did not call it unverified (an unverified address proves nothing), and the groups.
 */
export function callerOfIdentity(identity: Identity): Caller {
  return {
    ...(identity.email !== undefined && identity.emailVerified !== false &&
      { email: identity.email }),
    ...(identity.groups !== undefined && { groups: identity.groups }),
  };
}

type Admits = (caller: Caller) => boolean;

/** A rule's check: sets built once, a few lookups per call. */
function compileAccess(rule: AccessRule): Admits {
  const emails = new Set(rule.emails);
  const domains = new Set(rule.domains);
  const groups = new Set(rule.groups);
  return (caller) => {
    if (caller.email !== undefined && (emails.size > 0 || domains.size > 0)) {
      const email = caller.email.toLowerCase();
      if (emails.has(email)) return true;
      const at = email.lastIndexOf("@");
      if (at > 0 && domains.has(email.slice(at + 1))) return true;
    }
    if (groups.size > 0 && caller.groups) {
      for (const group of caller.groups) if (groups.has(group)) return true;
    }
    return false;
  };
}

/** Tool names seen lately and what applies to them; bounded, as callers choose the names. */
const MAX_CACHED_TOOLS = 1_024;
const MAX_CACHED_NAME = 256;
/** Denied to all, or the access checks of the rules that match (none: for everyone). */
type ToolVerdict = "denied" | Admits[];

function compileTools(tools: ToolPolicy): (tool: string) => ToolVerdict {
  const deny = compileGlobs(tools.deny);
  const allow = tools.allow && compileGlobs(tools.allow);
  const rules = tools.rules.map((rule) => ({
    tools: compileGlobs(rule.tools)!,
    admits: compileAccess(rule.access),
  }));
  const decide = (tool: string): ToolVerdict => {
    if (deny?.test(tool)) return "denied";
    // `allow: []` lists nothing, so nothing is allowed.
    if (tools.allow && !allow?.test(tool)) return "denied";
    return rules.filter((rule) => rule.tools.test(tool)).map((rule) => rule.admits);
  };
  const seen = new Map<string, ToolVerdict>();
  return (tool) => {
    let verdict = seen.get(tool);
    if (verdict === undefined) {
      verdict = decide(tool);
      if (tool.length <= MAX_CACHED_NAME) {
        if (seen.size >= MAX_CACHED_TOOLS) seen.clear();
        seen.set(tool, verdict);
      }
    }
    return verdict;
  };
}

export function compileServerPolicy(server: ServerConfig): ServerPolicy {
  const admits: Admits = server.access ? compileAccess(server.access) : () => true;
  const verdictOf = server.tools && compileTools(server.tools);
  const mayUseTool = (caller: Caller, tool: string): boolean => {
    if (!verdictOf) return true;
    const verdict = verdictOf(tool);
    return verdict !== "denied" && verdict.every((ruleAdmits) => ruleAdmits(caller));
  };
  return {
    server: server.name,
    admits,
    refusal(caller) {
      if (admits(caller)) return undefined;
      // A person is told whom to ask, not the access list (it may name internal groups); a
      // service credential is the administrators' own, so they are told what it lacks.
      if (caller.email !== undefined) {
        return `${caller.email} may not use the server "${server.name}"; ask the gateway's administrators for access`;
      }
      return `a caller without an email address may not use the server "${server.name}": ${
        missingForCredential(server.access!, caller)
      }`;
    },
    filtersTools: verdictOf !== undefined,
    mayUseTool,
    filterTools<T>(caller: Caller, tools: T[]): T[] {
      if (!verdictOf) return tools;
      return tools.filter((tool) => {
        const name = (tool as { name?: unknown } | null)?.name;
        return typeof name === "string" && mayUseTool(caller, name);
      });
    },
  };
}

/** What a caller without an email address (a service credential) lacks to pass `access`. */
function missingForCredential(access: AccessRule, caller: Caller): string {
  if (access.groups.length === 0) {
    return "its access: admits by email address or domain only, which a service credential does not have; list a group under access.groups and give it to the credential (groups: in serviceAuths)";
  }
  const held = caller.groups?.length
    ? `its groups: ${caller.groups.join(", ")}`
    : "it has no groups";
  return `it needs one of the groups ${
    access.groups.join(", ")
  }, and this credential has none of them (${held}); add one to the credential's groups: in serviceAuths`;
}
