/**
 * Every group the configuration names: in servers' `access`, in their tool rules' `access`,
 * and in `oauth.allow`. An access token carries only these of a person's groups, so its size
 * follows the configuration, not the directory (a person may be in hundreds of groups).
 */

/** What of a server names groups (a `ServerConfig` fits). */
export interface GroupNaming {
  access?: { groups: readonly string[] };
  tools?: { rules: readonly { access: { groups: readonly string[] } }[] };
}

export function namedGroups(
  servers: Iterable<GroupNaming>,
  allow?: { groups: readonly string[] },
): Set<string> {
  const names = new Set<string>(allow?.groups);
  for (const server of servers) {
    for (const group of server.access?.groups ?? []) names.add(group);
    for (const rule of server.tools?.rules ?? []) {
      for (const group of rule.access.groups) names.add(group);
    }
  }
  return names;
}
