/**
 * The operator console wired to the gateway's parts (the composition root's share of it):
 * `ConsoleSources` over the session registry, the call window, grants, credentials, the tool
 * ledger, the policies and the recent audit events. Reads of the storage are cached for a
 * second (replicas seen: thirty), so an open console never adds a scan per request, and none
 * of them sits on the proxy's path.
 */
import type { AdminConfig } from "./config/admin_config.ts";
import type { ResolvedConfig } from "./config/types.ts";
import type { Clock } from "./core/clock.ts";
import type { ServerName } from "./core/ids.ts";
import type { UserCredentials } from "./credentials/user_credentials.ts";
import { deriveHmacKey } from "./crypto/keys.ts";
import type { Secret } from "./core/secret.ts";
import { storageSummary } from "./core/storage_url.ts";
import { allowedOriginSet } from "./http/origin.ts";
import type { SessionRegistry } from "./mcp/sessions/sessions.ts";
import type { ProcessPool } from "./mcp/backends/process_pool.ts";
import { revisionKey, type RevisionMemory } from "./mcp/backends/revision_probe.ts";
import { ToolLedger } from "./mcp/tools/tool_ledger.ts";
import type { CallWindow } from "./observability/call_window.ts";
import type { Logger } from "./observability/logger.ts";
import type { RecentEvents } from "./observability/recent_events.ts";
import { type GrantAdmin, serverNames } from "./oauth/grant_admin.ts";
import { explainAccess } from "./policy/access_explain.ts";
import type { Policies } from "./policy/server_policy.ts";
import { KEYS } from "./store/keys.ts";
import type { Store } from "./store/store.ts";
import { VERSION } from "./version.ts";
import { adminCookiePolicy, AdminSessions } from "./web/admin/admin_sessions.ts";
import { OperatorConsole } from "./web/admin/console.ts";
import { ConsoleSignIn } from "./web/admin/console_sign_in.ts";
import { cookiePolicy } from "./web/cookies.ts";
import type { IdentityProvider } from "./idp/provider.ts";
import type { Identity } from "./core/identity.ts";
import type { CurrentIdentity } from "./oauth/token.ts";
import type { ConnectionRow, ConsoleSources, ToolRow } from "./web/admin/sources.ts";
import type { LoginFlow } from "./web/login_flow.ts";
import type { SsoSessions } from "./web/sso.ts";

export interface ConsoleParts {
  config: ResolvedConfig;
  admin: AdminConfig;
  master: Secret;
  store: Store;
  clock: Clock;
  logger: Logger;
  auditLogger: Logger;
  sessions: SessionRegistry;
  processes: ProcessPool;
  calls: CallWindow;
  events: RecentEvents;
  policies: Policies;
  startedAt: number;
  replica: string;
  /** When the TLS certificate served now expires (undefined without HTTPS in the binary). */
  certificateExpiry?: () => number | undefined;
  /** What each backend was learned to speak (`protocol: auto`). */
  revisions?: RevisionMemory;
  oauth: {
    sso: SsoSessions;
    idp: IdentityProvider;
    loginFlow: LoginFlow;
    grants: GrantAdmin;
    credentials: UserCredentials;
    /** The authorization server: the person as the provider states them now (groupsMaxAge). */
    server?: { tokenDeps: { currentIdentity?(identity: Identity): Promise<CurrentIdentity> } };
  };
}

/** A value read at most once per `ms`; readers in between get the last one. */
function cached<T>(clock: Clock, ms: number, read: () => Promise<T>): () => Promise<T> {
  let at = -Infinity;
  let value: Promise<T> | undefined;
  return () => {
    const now = clock.now();
    if (!value || now - at >= ms) {
      at = now;
      value = read();
      value.catch(() => {
        at = -Infinity;
      });
    }
    return value;
  };
}

export function consoleSources(parts: ConsoleParts): ConsoleSources {
  const { config, store, clock, sessions, oauth } = parts;
  const ledger = new ToolLedger(store, clock, config.limits.heldToolRetentionMs);
  const tools = cached(clock, 1_000, async () => (await ledger.records()) as ToolRow[]);
  const replicas = cached(clock, 30_000, async () => {
    const owners = new Set([parts.replica]);
    const now = clock.now();
    for (
      const entry of await store.list<{ owner?: string; expiresAt?: number }>(KEYS.sharedSessions)
    ) {
      if (entry.value?.owner && (entry.value.expiresAt ?? Infinity) > now) {
        owners.add(entry.value.owner);
      }
    }
    return owners.size;
  });
  const grantsOf = new Map<string, ReturnType<typeof cached<unknown>>>();
  const tls = config.tls?.acme
    ? `ACME for ${config.tls.acme.domain}, renewed ${
      Math.round(config.tls.acme.renewBeforeMs / 86_400_000)
    } days before expiry`
    : config.tls?.files
    ? "certificate files"
    : "off";
  return {
    events: parts.events,
    facts: async () => ({
      version: VERSION,
      startedAt: parts.startedAt,
      replica: parts.replica,
      replicas: await replicas().catch(() => 1),
      tls: tlsText(tls, parts.certificateExpiry?.(), clock.now()),
      storage: storageSummary(config.storage),
    }),
    servers: () => {
      const counts = sessions.countByServer();
      const pooled = new Map(parts.processes.readings().map((r) => [r.server, r.processes]));
      return [...config.servers.values()].map((server) => {
        const live = counts.get(server.name) ?? 0;
        if (server.transport === "aggregate") {
          return {
            name: server.name,
            transport: "aggregate",
            members: server.members,
            revision: "—",
            sessions: live,
            processes: 0,
          };
        }
        const share = server.transport === "stdio" ? server.share : undefined;
        return {
          name: server.name,
          transport: server.transport,
          share,
          revision: server.protocol === "auto"
            ? parts.revisions?.get(revisionKey(server)) ?? "auto"
            : server.protocol,
          sessions: live,
          processes: share === "session" ? live : pooled.get(server.name) ?? 0,
        };
      });
    },
    series: (server) => parts.calls.series(server, clock.now()),
    lastFailure: (server) => parts.calls.lastFailure(server),
    lastCall: (server) => parts.calls.lastCall(server),
    sessions: (email) => {
      const wanted = email?.toLowerCase();
      const rows = [];
      for (const session of sessions.list()) {
        const principal = session.principal;
        if (wanted !== undefined && principal.email?.toLowerCase() !== wanted) continue;
        rows.push({
          id: session.id,
          user: principal.id,
          email: principal.email,
          server: session.server.name,
          client: principal.clientId,
          revision: session.protocolVersion,
          startedAt: session.activity.openedAt,
          lastUsedAt: session.activity.last,
          groups: principal.groups ?? [],
        });
        if (rows.length >= 500) break;
      }
      return rows;
    },
    grants: (email) => {
      let read = grantsOf.get(email);
      if (!read) {
        if (grantsOf.size > 100) grantsOf.clear();
        grantsOf.set(email, read = cached(clock, 1_000, () => oauth.grants.list({ email })));
      }
      return read() as ReturnType<ConsoleSources["grants"]>;
    },
    revokeGrant: async (id) => {
      grantsOf.clear();
      return await oauth.grants.revoke({ grant: id });
    },
    connections: async (user) => {
      const rows: ConnectionRow[] = [];
      for (const service of oauth.credentials.services()) {
        const status = await oauth.credentials.status(user, service.name);
        rows.push({
          server: service.name,
          kind: service.userToken.kind,
          state: status.state,
          ...(status.state === "connected" && {
            updatedAt: status.updatedAt,
            scopes: status.scope,
            expiresAt: status.expiresAt,
          }),
          ...(status.state === "reconnect" && { reason: status.reason }),
        });
      }
      return rows;
    },
    disconnect: (user, server) => oauth.credentials.remove(user, server),
    access: (person) =>
      [...config.servers.values()].map((server) => ({
        server: server.name,
        ...explainAccess(server, parts.policies.get(server.name), person),
      })),
    tools,
    approveTool: async (server, tool, digest) => {
      const approved = await ledger.approve(server, tool, digest);
      return approved.length > 0;
    },
    refuseTool: (server, tool, digest, by) => ledger.refuse(server, tool, digest, by),
    pins: () =>
      [...config.servers.values()].flatMap((server) =>
        server.transport === "aggregate" || !server.toolPins
          ? []
          : Object.entries(server.toolPins).map(([tool, digest]) => ({
            server: server.name,
            tool,
            digest,
          }))
      ),
    auditAction: (admin, action, fields) => {
      parts.auditLogger.warn("audit", { event: "admin_action", admin, action, ...fields });
      parts.events.add({
        at: clock.now(),
        kind: "admin",
        person: admin,
        server: fields.server,
        what: action,
        outcome: "done",
        detail: fields,
      });
    },
  };
}

/** How HTTPS is served, and when the certificate served now expires. */
function tlsText(mode: string, expiry: number | undefined, now: number): string {
  if (expiry === undefined) return mode;
  const days = Math.floor((expiry - now) / 86_400_000);
  const date = new Date(expiry).toISOString().slice(0, 10);
  return `${mode}; certificate expires ${date} (in ${days} days)`;
}

/** The console, ready for the route table. */
export async function createConsole(parts: ConsoleParts): Promise<OperatorConsole> {
  const { config, admin, clock, logger } = parts;
  // On a listener of its own the console has its own origin, cookies and sign-in.
  const ownUrl = admin.listen && admin.url ? admin.url : undefined;
  const baseUrl = ownUrl ?? config.baseUrl;
  const sessions = new AdminSessions({
    store: parts.store,
    clock,
    idleMs: admin.idleTimeoutMs,
    cookies: adminCookiePolicy(baseUrl, admin.path),
    csrfKey: await deriveHmacKey(parts.master, "admin-csrf"),
  });
  const own = ownUrl
    ? new ConsoleSignIn({
      idp: parts.oauth.idp,
      store: parts.store,
      clock,
      logger,
      callbackUri: `${ownUrl}${admin.path}/callback`,
      cookies: {
        ...cookiePolicy(ownUrl),
        path: `${new URL(ownUrl).pathname.replace(/\/$/, "")}${admin.path}`,
      },
    })
    : undefined;
  return new OperatorConsole({
    admin,
    baseUrl,
    sessions,
    sso: own ? undefined : parts.oauth.sso,
    ownSignIn: own,
    signIn: (returnTo) => parts.oauth.loginFlow.signIn(returnTo),
    sources: consoleSources(parts),
    origins: allowedOriginSet(baseUrl, []),
    serversOf: (grant) => serverNames(grant.audience, config.baseUrl),
    knownServer: (name) =>
      config.servers.get(name as ServerName)?.transport !== undefined &&
      config.servers.get(name as ServerName)?.transport !== "aggregate",
    clock,
    logger,
    currentIdentity: parts.oauth.server?.tokenDeps.currentIdentity,
  });
}
