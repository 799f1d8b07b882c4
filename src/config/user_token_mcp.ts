/**
 * `userToken.kind: mcp`: a remote MCP server behind its own OAuth. Only what discovery cannot
 * learn is configured: the scopes to ask for, a client registered by hand, and the hosts besides
 * the server's own that discovery may follow to reach its authorization server.
 */
import { Secret } from "../core/secret.ts";
import { type Checker, describe, type Dict } from "./checker.ts";
import type { ConfigPath } from "./issues.ts";
import type { McpUserToken } from "./types.ts";

export const MCP_KEYS = ["scopes", "clientId", "clientSecret", "authorizationHosts"];

/** A bare host name (no scheme, port or path), as `authorizationHosts` lists them. */
const HOST = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

export function parseMcpUserToken(
  c: Checker,
  spec: Dict,
  at: ConfigPath,
  common: { displayName: string; instructions?: string; remote: boolean },
): McpUserToken {
  if (!common.remote) {
    c.fail(
      [...at, "kind"],
      "kind: mcp is for remote servers",
      "use transport: streamable-http (or sse) with the server's url, or kind: oauth / manual for a stdio server",
    );
  }
  for (const key of ["oauth", "pattern"]) {
    if (spec[key] !== undefined) {
      c.fail(
        [...at, key],
        "is not used with kind: mcp",
        "remove it: the server's authorization server is discovered from the server itself",
      );
    }
  }
  const clientId = c.optionalString(spec.clientId, [...at, "clientId"]);
  const clientSecret = c.optionalString(spec.clientSecret, [...at, "clientSecret"]);
  if (clientSecret !== undefined && clientId === undefined) {
    c.fail(
      [...at, "clientSecret"],
      "is given without clientId",
      "add the clientId the service registered for Gatehouse, or remove clientSecret",
    );
  }
  const authorizationHosts = c.stringList(spec.authorizationHosts, [
    ...at,
    "authorizationHosts",
  ]).map((host, i) => {
    const lower = host.toLowerCase();
    if (!HOST.test(lower)) {
      c.fail(
        [...at, "authorizationHosts", i],
        `not a host name: ${describe(host)}`,
        "a bare host such as auth.tracker.example, without https:// or a path",
      );
    }
    return lower;
  });
  return {
    kind: "mcp",
    displayName: common.displayName,
    instructions: common.instructions,
    scopes: c.stringList(spec.scopes, [...at, "scopes"]),
    clientId,
    clientSecret: clientSecret === undefined ? undefined : new Secret(clientSecret),
    authorizationHosts,
  };
}
