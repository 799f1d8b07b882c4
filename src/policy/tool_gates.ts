/**
 * A session's tool gate: which tools one caller may see and call on one server, by the names
 * that server's client sees. A server's own `tools:` applies to those names; an aggregate's
 * client sees `member<delimiter>tool`, so each member's own `tools:` applies as well, to the
 * member's name for it. Undefined when nothing is filtered, so such sessions check nothing.
 * (An aggregate also leaves a member's refused tools out of what it lists and routes, by the
 * member's own names; this gate is what refuses the call before the aggregate sees it.)
 */
import type { ServerConfig } from "../config/types.ts";
import type { ServerName } from "../core/ids.ts";
import type { ToolGate } from "../core/tool_gate.ts";
import type { Caller, Policies, ServerPolicy } from "./server_policy.ts";

export function toolGateFor(
  policies: Policies,
  server: ServerConfig,
  caller: Caller,
): ToolGate | undefined {
  const own = policies.get(server.name);
  // Every member, longest prefix first: a name is its member's by the longest that fits.
  const members = server.transport === "aggregate"
    ? server.members.map((name) => memberPart(name, server.delimiter, policies.get(name)))
      .sort((a, b) => b.prefix.length - a.prefix.length)
    : [];
  const filtering = members.some((member) => member.policy?.filtersTools);
  if (!own?.filtersTools && !filtering) return undefined;
  return {
    allows(name) {
      if (own?.filtersTools && !own.mayUseTool(caller, name)) return false;
      if (!filtering) return true;
      const member = members.find((part) => name.startsWith(part.prefix));
      return member?.policy?.mayUseTool(caller, name.slice(member.prefix.length)) ?? true;
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
