/**
 * Which rule of a server's `access:` decides for a caller, in words for the operator console:
 * the entry that admits them, or that none does. Decides exactly as server_policy.ts does
 * (its verdict is taken as given) and only adds the why.
 */
import type { ServerConfig } from "../config/types.ts";
import type { Caller, ServerPolicy } from "./server_policy.ts";

export interface AccessExplanation {
  allowed: boolean;
  rule: string;
}

export function explainAccess(
  server: ServerConfig,
  policy: ServerPolicy | undefined,
  caller: Caller,
): AccessExplanation {
  const allowed = policy?.admits(caller) ?? true;
  const access = server.access;
  if (!access) {
    return { allowed, rule: "no access: rule: everyone the gateway lets sign in may use it" };
  }
  if (!allowed) {
    const listed = [
      access.emails.length ? `${access.emails.length} address(es)` : "",
      access.domains.length ? `domains ${access.domains.join(", ")}` : "",
      access.groups.length ? `groups ${access.groups.join(", ")}` : "",
    ].filter(Boolean).join("; ");
    return { allowed, rule: `no entry of access: matches (it lists ${listed || "nobody"})` };
  }
  const email = caller.email?.toLowerCase();
  if (email && access.emails.includes(email)) {
    return { allowed, rule: `access.emails lists ${email}` };
  }
  const domain = email?.slice(email.lastIndexOf("@") + 1);
  if (domain && access.domains.includes(domain)) {
    return { allowed, rule: `access.domains lists ${domain}` };
  }
  const group = caller.groups?.find((name) => access.groups.includes(name));
  return { allowed, rule: group ? `access.groups lists ${group}` : "access: admits them" };
}
