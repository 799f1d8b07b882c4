/**
 * Turns the parsed YAML (`unknown`, `${ENV}` already substituted) into a `ResolvedConfig`,
 * collecting every problem with its path and a hint instead of stopping at the first. Each
 * section is checked by its own module; this one knows the top-level keys and the order the
 * sections are checked in (the order their issues are reported).
 */
import { parseAdmin } from "./admin.ts";
import { Checker } from "./checker.ts";
import type { ConfigIssue } from "./issues.ts";
import { parseBaseUrl, parseListen, parseOrigins, requireHttpsForOAuth } from "./addresses.ts";
import { parseConnections } from "./connections.ts";
import { parseLimits } from "./limits.ts";
import { parsePreviousSecrets, parseSecret } from "./master_secret.ts";
import { parseOAuth } from "./oauth.ts";
import { parseAudit, parseLogLevel, parseMetrics } from "./observability.ts";
import { parseRateLimits } from "./rate_limits.ts";
import type { Substitution } from "./server_backends.ts";
import { parseServers } from "./servers.ts";
import {
  parseReplicaId,
  parseStorage,
  parseStorageOptions,
  warnSecretInDatabase,
} from "./storage.ts";
import { parseTls } from "./tls.ts";
import { parseTrustedProxies, warnWithoutTrustedProxies } from "./trusted_proxies.ts";
import type { ResolvedConfig, ServerConfig } from "./types.ts";

export type { Substitution } from "./server_backends.ts";

const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

const TOP_KEYS = [
  "$schema",
  "listen",
  "baseUrl",
  "storage",
  "storagePool",
  "storageTimeout",
  "storageCaFile",
  "secret",
  "allowedOrigins",
  "limits",
  "connections",
  "shutdownGrace",
  "logLevel",
  "servers",
  "previousSecrets",
  "oauth",
  "rateLimits",
  "audit",
  "metrics",
  "replicaId",
  "trustedProxies",
  "tls",
  "admin",
];

/**
 * Validates a parsed configuration document: the resolved config, or every issue found.
 * `substitutions` (from loading) tell which values came from the environment.
 */
export function validateConfig(
  input: unknown,
  substitutions: Substitution[] = [],
):
  | { config: ResolvedConfig; issues: []; warnings: ConfigIssue[] }
  | { config?: undefined; issues: ConfigIssue[]; warnings: ConfigIssue[] } {
  const c = new Checker();
  const raw = c.object(input, [], TOP_KEYS) ?? {};
  const listen = parseListen(c, raw.listen);
  const baseUrl = parseBaseUrl(c, raw.baseUrl, listen);
  const storage = parseStorage(c, raw.storage);
  const secret = parseSecret(c, raw.secret);
  warnSecretInDatabase(c, storage, secret);
  const logLevel = parseLogLevel(c, raw.logLevel);
  const previousSecrets = parsePreviousSecrets(c, raw.previousSecrets);
  const oauth = parseOAuth(c, raw.oauth);
  if (oauth) requireHttpsForOAuth(c, baseUrl);
  const servers = parseServers(c, raw.servers, {
    oauthConfigured: oauth !== undefined,
    substitutions,
    groupsAtSignIn: oauth !== undefined &&
      (oauth.idp.provider === "github" || oauth.idp.groupsClaim !== undefined),
    lowerCaseGroups: oauth?.idp.provider === "github",
  });
  if (oauth?.idp.provider === "github") refuseExchangeWithGitHub(c, servers);
  const limits = parseLimits(c, raw.limits);
  // A client waiting for the slowest server's answer must not be cut as idle meanwhile.
  const longestRequestMs = Math.max(
    limits.requestTimeoutMs,
    ...[...servers.values()].map((server) => server.requestTimeoutMs ?? 0),
  );
  const trustedProxies = parseTrustedProxies(c, raw.trustedProxies);
  const connections = parseConnections(c, raw.connections, longestRequestMs);
  const tls = parseTls(c, raw.tls, baseUrl);
  if (tls && !connections.front) {
    c.fail(
      ["connections", "front"],
      "must stay true with tls: the front terminates TLS",
      "leave TLS to the proxy in front (and drop tls:), or keep the front",
    );
  }
  warnWithoutTrustedProxies(c, baseUrl, tls !== undefined, trustedProxies);
  const config: ResolvedConfig = {
    listen,
    baseUrl,
    storage,
    storageOptions: parseStorageOptions(c, raw, storage),
    secret,
    allowedOrigins: parseOrigins(c, raw.allowedOrigins),
    limits,
    connections,
    trustedProxies,
    tls,
    rateLimits: parseRateLimits(c, raw.rateLimits),
    audit: parseAudit(c, raw.audit),
    metrics: parseMetrics(c, raw.metrics),
    replicaId: parseReplicaId(c, raw.replicaId),
    shutdownGraceMs: c.duration(raw.shutdownGrace, ["shutdownGrace"], DEFAULT_SHUTDOWN_GRACE_MS),
    logLevel,
    servers,
    previousSecrets,
    oauth,
    admin: parseAdmin(c, raw.admin, oauth, servers),
    warnings: c.warnings,
  };
  return c.issues.length
    ? { issues: c.issues, warnings: c.warnings }
    : { config, issues: [], warnings: c.warnings };
}

/** GitHub has no RFC 8693 token endpoint: `kind: exchange` needs an OpenID provider. */
function refuseExchangeWithGitHub(c: Checker, servers: Map<string, ServerConfig>): void {
  for (const server of servers.values()) {
    if (server.userToken?.kind !== "exchange") continue;
    c.fail(
      ["servers", server.name, "userToken", "kind"],
      "kind: exchange needs an OpenID Connect identity provider; GitHub has no token exchange",
      "use provider: oidc (or google, azure) under oauth.idp, or kind: oauth for this server",
    );
  }
}
