/**
 * Which `approvals:` rule a tools/call meets, by the name the client called: a server's own
 * rules on its own names, and in an aggregate each member's rules on the member's names for its
 * tools, called with the member's prefix or without (the aggregate's own rules, if any, on the
 * full names). Compiled once per configuration;
 * a name no pattern matches costs one regular expression test per rule set.
 */
import type { ApprovalRule, ServerConfig } from "../../config/types.ts";
import type { ServerName } from "../../core/ids.ts";
import { compileGlobs } from "../../policy/glob.ts";

/** A rule that names the tool; `destructiveOnly` rules still need the tool's annotations. */
export interface RuleMatch {
  rule: ApprovalRule;
  /** The server whose rule it is (an aggregate's member, or the server itself). */
  owner: string;
  /** The tool's name at `owner`. */
  tool: string;
}

interface Compiled {
  rule: ApprovalRule;
  pattern: RegExp;
}

/** A set's rules, and one expression matching what any of them names (most calls: none). */
interface RuleSet {
  any?: RegExp;
  rules: Compiled[];
}

export class ApprovalRules {
  readonly #own: RuleSet;
  readonly #members: { prefix: string; name: string; rules: RuleSet }[];
  /** Every member's prefix (with rules or not): a name carrying one is that member's alone. */
  readonly #prefixes: string[];

  private constructor(
    readonly server: ServerConfig,
    servers: ReadonlyMap<ServerName, ServerConfig>,
  ) {
    this.#own = compile(server.approvals);
    const delimiter = server.transport === "aggregate" ? server.delimiter : "";
    const members = server.transport === "aggregate" ? server.members : [];
    this.#prefixes = members.map((name) => `${name}${delimiter}`);
    this.#members = members
      .map((name) => ({
        prefix: `${name}${delimiter}`,
        name: name as string,
        rules: compile(servers.get(name)?.approvals),
      }))
      .filter((member) => member.rules.rules.length > 0)
      // A name belongs to the member with the longest prefix that fits.
      .sort((a, b) => b.prefix.length - a.prefix.length);
  }

  /** The rules for `server`'s calls; undefined when none of its tools can be held. */
  static for(
    server: ServerConfig,
    servers: ReadonlyMap<ServerName, ServerConfig>,
  ): ApprovalRules | undefined {
    const rules = new ApprovalRules(server, servers);
    return rules.#own.rules.length || rules.#members.length ? rules : undefined;
  }

  /**
   * Every rule naming `name`, in the order they apply (the member's, then the server's). A name
   * in a member's namespace meets that member's rules, without the prefix; a name in none is
   * tried on every member as it is, since the aggregate routes a member's own name (as an App
   * calls its server's tools) to the member that lists it: leaving the prefix off must not leave
   * the rule behind.
   */
  matching(name: string): RuleMatch[] {
    const found: RuleMatch[] = [];
    const prefixed = this.#members.length > 0 &&
      this.#prefixes.some((prefix) => name.startsWith(prefix));
    const members = prefixed
      ? [this.#members.find((part) => name.startsWith(part.prefix))].filter((m) => m !== undefined)
      : this.#members;
    for (const member of members) {
      const tool = prefixed ? name.slice(member.prefix.length) : name;
      if (!member.rules.any?.test(tool)) continue;
      for (const { rule, pattern } of member.rules.rules) {
        if (pattern.test(tool)) found.push({ rule, owner: member.name, tool });
      }
    }
    if (this.#own.any?.test(name)) {
      for (const { rule, pattern } of this.#own.rules) {
        if (pattern.test(name)) found.push({ rule, owner: this.server.name, tool: name });
      }
    }
    return found;
  }
}

function compile(rules: ApprovalRule[] | undefined): RuleSet {
  const all = rules ?? [];
  return {
    any: compileGlobs(all.flatMap((rule) => rule.tools)),
    rules: all.map((rule) => ({ rule, pattern: compileGlobs(rule.tools)! })),
  };
}
