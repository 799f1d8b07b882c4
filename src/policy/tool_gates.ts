/**
 * A session's tool gate: which tools one caller may see and call on one server, by the names
 * that server's client sees. A server's own `tools:` applies to those names; an aggregate's
 * client sees `member<delimiter>tool`, so each member's own `tools:` applies as well, to the
 * member's name for it, and a member whose `access:` refuses the caller allows none of its tools. Undefined when nothing is filtered, so such sessions check nothing.
 * (An aggregate also leaves refused tools out of what it lists and routes, by their full
 * names: the member's own for the member's policy, `member<delimiter>tool` for its own. This
 * gate is what refuses the call before the aggregate sees it, except for a listed name of the
 * longest length, which may be a longer name cut short: the aggregate alone judges those.)
 */
import type { ServerConfig } from "../config/types.ts";
import type { ServerName } from "../core/ids.ts";
import { MAX_TOOL_NAME_LENGTH, type ToolGate } from "../core/tool_gate.ts";
import type { Caller, Policies, ServerPolicy } from "./server_policy.ts";

export function toolGateFor(
  policies: Policies,
  server: ServerConfig,
  caller: Caller,
): ToolGate | undefined {
  const own = policies.get(server.name);
  // Every member, longest prefix first: a name is its member's by the longest that fits.
  const aggregate = server.transport === "aggregate";
  const members = aggregate
    ? server.members.map((name) => memberPart(name, server.delimiter, policies.get(name)))
      .sort((a, b) => b.prefix.length - a.prefix.length)
    : [];
  // A member whose access: does not admit the caller is left out of the aggregate: its tools
  // are refused here like any other the caller may not use, not left for the aggregate to call
  // unknown.
  const filtering = members.some((member) =>
    member.policy?.filtersTools || member.policy?.admits(caller) === false
  );
  if (!own?.filtersTools && !filtering) return undefined;
  return {
    allows(name) {
      if (aggregate && name.length >= MAX_TOOL_NAME_LENGTH) return true;
      const member = members.find((part) => name.startsWith(part.prefix));
      if (aggregate && !member) {
        // A member's own name, as an App (MCP Apps) calls its server's tools: allowed when one
        // member's tool of that name may be used; the aggregate routes it only to such a tool.
        return members.some((part) =>
          (!own?.filtersTools || own.mayUseTool(caller, `${part.prefix}${name}`)) &&
          (!part.policy ||
            (part.policy.admits(caller) && part.policy.mayUseTool(caller, name)))
        );
      }
      if (own?.filtersTools && !own.mayUseTool(caller, name)) return false;
      if (!filtering) return true;
      if (!member?.policy) return true;
      return member.policy.admits(caller) &&
        member.policy.mayUseTool(caller, name.slice(member.prefix.length));
    },
  };
}

interface MemberPart {
  prefix: string;
  policy?: ServerPolicy;
}

function memberPart(name: ServerName, delimiter: string, policy?: ServerPolicy): MemberPart {
  return { prefix: `${name}${delimiter}`, policy };
}
