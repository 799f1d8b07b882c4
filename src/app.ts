/**
 * The composition root: resolved config + adapters → the gateway's `fetch` and `close`.
 * The only place that constructs concrete implementations.
 */
import type { BackendServerConfig, ResolvedConfig, ServerConfig } from "./config/types.ts";
import { connectBackend } from "./mcp/backends/connect.ts";
import { createAggregateBackend } from "./mcp/aggregate/backend.ts";
import { DiscoveryCache } from "./mcp/aggregate/cache.ts";
import { Http1Client } from "./net/http1_client.ts";
import { proxied } from "./net/proxy_env.ts";
import { clientAddress } from "./net/client_address.ts";
import { VERSION } from "./version.ts";
import type { ServerName } from "./core/ids.ts";
import type { Clock } from "./core/clock.ts";
import { isLoopbackHost } from "./core/loopback.ts";
import { showStorage } from "./core/storage_url.ts";
import { Secret } from "./core/secret.ts";
import { randomBase64Url, randomHex } from "./crypto/random.ts";
import { createAuthenticator, type ServerAuthenticator } from "./http/bearer.ts";
import { namedGroups } from "./config/named_groups.ts";
import { buildRoutes } from "./http/routes.ts";
import { SessionRegistry, type SessionRegistryOptions } from "./mcp/sessions/sessions.ts";
import { StatelessLinks } from "./mcp/stateless/stateless_links.ts";
import { deriveAesKey, type KeyPurpose } from "./crypto/keys.ts";
import { createAuthServer, newRevocations, watchRevocations } from "./app_auth_server.ts";
import { sameConfig } from "./config/compare.ts";
import { type AuditLog, auditToolChange, loggerAudit } from "./observability/audit.ts";
import { ToolIntegrity } from "./mcp/tools/tool_integrity.ts";
import { ToolLedger } from "./mcp/tools/tool_ledger.ts";
import { GatewayMetrics } from "./observability/metrics.ts";
import { addReadings, addStorageReadings } from "./app_readings.ts";
import type { StorageMonitor } from "./store/monitored.ts";
import { ProcessPool } from "./mcp/backends/process_pool.ts";
import type { Logger } from "./observability/logger.ts";
import { KEYS } from "./store/keys.ts";
import { Readiness } from "./store/readiness.ts";
import type { Store } from "./store/store.ts";
import { storeSessionDirectory } from "./mcp/sessions/shared_sessions.ts";
import { Deadlines } from "./core/deadlines.ts";
import { RevisionMemory } from "./mcp/backends/revision_probe.ts";
import { compilePolicies } from "./policy/server_policy.ts";
import { requestTimeoutOf } from "./config/request_timeouts.ts";
import { toolGateFor } from "./policy/tool_gates.ts";
import { createConsole } from "./app_console.ts";
import {
  type ConsoleCarried,
  newConsoleCarried,
  noteCall,
  noteToolChange,
} from "./app_console_readings.ts";
import type { Revocations } from "./oauth/revocations.ts";
import { type ApprovalParts, approvalParts } from "./app_approvals.ts";
import { createBackendIdentity, personTokens, tellsClient } from "./app_identity.ts";

export interface Gateway {
  fetch(request: Request, info?: { remoteAddr?: { hostname?: string } }): Promise<Response>;
  sessions: SessionRegistry;
  /** Backend links of clients without sessions (MCP 2026-07-28), one per person and server. */
  links: StatelessLinks;
  /** The configuration it runs on. */
  readonly config: ResolvedConfig;
  /** Keys sealing TLS private keys in storage (ACME): the current secret's, then earlier ones'. */
  tlsKeys(): Promise<CryptoKey[]>;
  /** The Prometheus exposition of the gateway's metrics. */
  metrics(): string;
  /** What a configuration reload carries over: counters, and the aggregate caches' table. */
  readonly carried: {
    metrics: GatewayMetrics;
    caches: Map<ServerName, DiscoveryCache>;
    /** This process's name as the owner of shared sessions, when no replicaId is configured. */
    instance: string;
    /** The kept-alive HTTP client for backends: its connections outlive a reload. */
    backendClient: Http1Client;
    /** The request timeouts of sessions, which may outlive a reload. */
    deadlines: Deadlines;
    /** What each backend speaks (`protocol: auto`), as learned. */
    revisions: RevisionMemory;
    /** Revoked grants as this replica knows them, polled from storage (with `oauth:`). */
    revocations?: Revocations;
    /** Stdio processes shared per person or by everyone (`share:`): they outlive a reload. */
    processes: ProcessPool;
    /** The console's readings: the last hour of calls, the latest audit events, the start. */
    console: ConsoleCarried;
    /** Held calls' records and the board their waits are on (they outlive a reload). */
    approvals: ApprovalParts;
  };
  /** The operator console when `admin.listen` serves it on an address of its own. */
  adminConsole?: { handle(request: Request): Promise<Response> };
  /** Ends every session and stops every backend (within the shutdown grace). */
  close(): Promise<void>;
}

export interface GatewayDeps {
  store: Store;
  logger: Logger;
  clock: Clock;
  /** Where audit events go; by default the logger (main.ts gives one that ignores logLevel). */
  auditLogger?: Logger;
  /** Watches `store` (serve.ts wraps it): /health shows its state, /metrics its figures. */
  storageMonitor?: StorageMonitor;
}

/** Grace a stdio child gets between SIGTERM and SIGKILL; bounded by the shutdown grace. */
const KILL_GRACE_MS = 2_000;

/**
 * With `previous` (a configuration reload), its live sessions are taken over: those of
 * unchanged servers continue on the new configuration.
 */
export async function createGateway(
  config: ResolvedConfig,
  deps: GatewayDeps,
  previous?: Gateway,
): Promise<Gateway> {
  const { logger, store, clock } = deps;
  const master = await resolveMasterSecret(config, store, logger);
  const keysFor = (purpose: KeyPurpose) =>
    Promise.all([master, ...config.previousSecrets].map((key) => deriveAesKey(key, purpose)));
  // Who may use which server and tool, compiled once per configuration (src/policy/): the
  // authorization server, the MCP endpoints and the sessions all read these.
  const policies = compilePolicies(config.servers.values());
  // Kept for the process's life, like the sessions whose grants it ends.
  const carriedRevocations = previous?.carried.revocations;
  const revocations = carriedRevocations ?? (config.oauth ? newRevocations(deps) : undefined);
  const oauth = config.oauth && revocations
    ? await createAuthServer(config, config.oauth, master, { ...deps, revocations, policies })
    : undefined;
  // Counters survive a reload; members' lists are discovered again under the new config.
  const { metrics, caches, instance, backendClient, deadlines, revisions } = previous?.carried ?? {
    // Which MCP revision each backend speaks, learned once; kept across reloads.
    revisions: new RevisionMemory(),
    metrics: new GatewayMetrics(),
    // Request timeouts of sessions that outlive a reload stay on the one timer they started on.
    deadlines: new Deadlines(clock),
    caches: new Map<ServerName, DiscoveryCache>(),
    instance: randomHex(8),
    backendClient: new Http1Client({
      userAgent: `gatehouse/${VERSION}`,
      useFetchFor: proxied,
      clock,
    }),
  };
  caches.clear();
  const carriedConsole = previous?.carried.console ?? newConsoleCarried(clock);
  const approvals = approvalParts(config, { ...deps, metrics, revocations }, previous?.carried);
  // Who calls, told to backends (identity:); the signing keys are read from storage when used.
  const identity = createBackendIdentity(config, deps, await keysFor("assertion-keys"));
  const processes = previous?.carried.processes ?? new ProcessPool(clock, config.limits, logger);
  processes.configure(config.limits);
  processes.reconfigure(config.servers);
  const sessionOptions: SessionRegistryOptions = {
    limits: config.limits,
    logger,
    clock,
    deadlines,
    killGraceMs: Math.min(KILL_GRACE_MS, config.shutdownGraceMs),
    audit: callRecorder(config, metrics, deps.auditLogger ?? logger, carriedConsole, clock),
    idPrefix: config.replicaId,
    sharing: {
      directory: storeSessionDirectory(store, clock),
      owner: config.replicaId ?? instance,
    },
    toolGate: (server, principal) => toolGateFor(policies, server, principal),
    callHolds: approvals.holds,
    toolIntegrity: new ToolIntegrity({
      ledger: new ToolLedger(store, clock, config.limits.heldToolRetentionMs),
      clock,
      servers: config.servers,
      logger,
      toolsPerServer: config.limits.toolsPerServer,
      onChange: (change) => {
        metrics.toolChanges.inc({
          server: change.server,
          change: change.change,
          decision: change.decision,
        });
        auditToolChange(deps.auditLogger ?? logger, change);
        noteToolChange(carriedConsole, clock, change);
      },
    }),
    requestTimeout: (server) => requestTimeoutOf(server, config.limits, config.servers),
    connect: (server, user, connectOptions, resume, principal) => {
      const options = {
        ...connectOptions,
        fetch: backendClient.fetch,
        gatewaySecrets: [master, ...config.previousSecrets],
        revisions,
        processes,
        identity: principal && identity.forPrincipal(principal),
      };
      const tokens = oauth && personTokens(oauth, config.servers, user["user.id"]);
      if (server.transport !== "aggregate") {
        return connectBackend(server, user, options, tokens, resume);
      }
      let cache = caches.get(server.name);
      if (!cache) {
        caches.set(
          server.name,
          cache = new DiscoveryCache(server.cacheTtlMs, clock),
        );
      }
      // A member the person may not use is left out entirely; the others show only their tools.
      const members = server.members
        .filter((name) => !principal || policies.get(name)?.admits(principal) !== false)
        .map((name) => config.servers.get(name) as BackendServerConfig);
      return createAggregateBackend(server, members, user, {
        ...options,
        memberTools: principal && ((member, tools) => {
          const mine = policies.get(member as ServerName)?.filterTools(principal, tools) ?? tools;
          // The aggregate's own patterns, on the full name: the listed one may be cut short.
          const own = policies.get(server.name);
          if (!own?.filtersTools) return mine;
          return mine.filter((tool) =>
            typeof tool.name === "string" &&
            own.mayUseTool(principal, `${member}${server.delimiter}${tool.name}`)
          );
        }),
        cache,
        // The aggregate's own, for its lists and for members without one of their own.
        requestTimeoutMs: server.requestTimeoutMs ?? config.limits.requestTimeoutMs,
        clock,
        deadlines,
        tokens,
      });
    },
  };
  const sessions = previous?.sessions ?? new SessionRegistry(sessionOptions);
  const links = previous?.links ?? new StatelessLinks(
    sessions,
    clock,
    await keysFor("mcp-request-state"),
    config.limits.requestTimeoutMs,
    revocations && ((grant) => revocations.has(grant)),
  );
  links.perClient = (server) => tellsClient(server, config.servers);
  if (revocations && !carriedRevocations) {
    await watchRevocations(revocations, sessions, links, logger);
  }
  if (previous) {
    // Sessions of servers whose configuration is unchanged continue; the others end.
    await sessions.reconfigure(
      sessionOptions,
      (session) => unchangedForSession(session.server, previous.config, config),
    );
  }
  const authenticators = new Map<ServerName, ServerAuthenticator>();
  // A person is judged by their grant's groups that this configuration names (bearer.ts).
  const named = namedGroups(config.servers.values(), config.oauth?.allow);
  for (const server of config.servers.values()) {
    authenticators.set(server.name, await createAuthenticator(server, oauth?.verifier, named));
  }
  const operatorConsole = config.admin && oauth
    ? await createConsole({
      config,
      admin: config.admin,
      master,
      store,
      clock,
      logger,
      auditLogger: deps.auditLogger ?? logger,
      sessions,
      processes,
      policies,
      replica: config.replicaId ?? instance,
      revisions,
      ...carriedConsole,
      certificateExpiry: () => carriedConsole.certificateExpiry?.(),
      oauth: { ...oauth, loginFlow: oauth.server.loginFlow },
    })
    : undefined;
  // With admin.listen the console is not on the main port: serve.ts serves `adminConsole`.
  const ownListener = config.admin?.listen !== undefined;
  const app = buildRoutes({
    console: ownListener ? undefined : operatorConsole,
    config,
    sessions,
    links,
    authenticators,
    logger,
    authServer: oauth?.server,
    clock,
    metrics,
    policies,
    storage: deps.storageMonitor,
    ...(deps.storageMonitor && { readiness: new Readiness(store, clock) }),
    approvals,
    assertionKeys: identity.keys,
  });
  if (!previous) {
    addReadings(metrics, sessions, caches, processes);
    if (deps.storageMonitor) addStorageReadings(metrics, deps.storageMonitor);
  }
  return {
    sessions,
    links,
    config,
    adminConsole: ownListener ? operatorConsole : undefined,
    tlsKeys: () => keysFor("tls-keys"),
    metrics: () => metrics.registry.render(),
    carried: {
      metrics,
      caches,
      instance,
      backendClient,
      deadlines,
      revisions,
      revocations,
      processes,
      console: carriedConsole,
      approvals,
    },
    // The client every limit, log line and audit names: the peer, or whom a trusted proxy named.
    fetch: async (request, info) =>
      await app.fetch(request, {
        remoteAddress: clientAddress(
          info?.remoteAddr?.hostname,
          request.headers,
          config.trustedProxies,
        ),
      }),
    close: async () => {
      await revocations?.close();
      approvals.board.close();
      await sessions.closeAll("the gateway is shutting down");
      await processes.closeAll("the gateway is shutting down");
      backendClient.close();
    },
  };
}

/** A session continues across a reload when its server (and an aggregate's members) did not change. */
function unchangedForSession(
  server: ServerConfig,
  before: ResolvedConfig,
  after: ResolvedConfig,
): boolean {
  const now = after.servers.get(server.name);
  if (!sameConfig(server, now)) return false;
  if (server.transport !== "aggregate") return true;
  return server.members.every((member) =>
    sameConfig(before.servers.get(member), after.servers.get(member))
  );
}

/**
 * Counts and times every audited call (the metrics, and the console's last hour and latest
 * events); writes the audit line when the trail is enabled.
 */
function callRecorder(
  config: ResolvedConfig,
  metrics: GatewayMetrics,
  logger: Logger,
  console: ConsoleCarried,
  clock: Clock,
): AuditLog {
  const trail = config.audit.enabled ? loggerAudit(logger, config.audit.arguments) : undefined;
  return {
    withArguments: trail?.withArguments ?? false,
    record(event) {
      metrics.calls.inc({ server: event.server, outcome: event.outcome });
      metrics.callDuration.observe(event.durationMs / 1000, { server: event.server });
      noteCall(console, clock, event);
      trail?.record(event);
    },
  };
}

/** The configured master secret, or one generated once and kept in storage. */
async function resolveMasterSecret(
  config: ResolvedConfig,
  store: Store,
  logger: Logger,
): Promise<Secret> {
  if (config.secret) return config.secret;
  const stored = await store.setIfAbsent(KEYS.masterSecret, randomBase64Url(48));
  if (looksDeployed(config)) {
    // The generated secret lies beside what it protects: a copy of the KV file (a backup, a
    // readable mode, a shared volume) is enough to forge tokens and open stored credentials.
    logger.warn(
      "no secret configured: the generated master secret is kept in storage beside the data it protects, so whoever can read the storage file can forge access tokens and open stored credentials; set secret: ${GATEHOUSE_SECRET} from an EnvironmentFile or a secret store",
      {
        storage: showStorage(config.storage),
        hint:
          "generate one with: openssl rand -base64 48; list the generated one under previousSecrets so that tokens and credentials already issued stay valid (docs/security.md)",
      },
    );
  } else {
    logger.info(
      "no secret configured: using one generated and kept in storage; set secret: ${GATEHOUSE_SECRET} to manage it yourself",
    );
  }
  return new Secret(stored);
}

/** Published over https, or listening where other machines reach it: not a developer's laptop. */
function looksDeployed(config: ResolvedConfig): boolean {
  const host = config.listen.hostname;
  const loopback = isLoopbackHost(host) || host === "::1";
  return config.baseUrl.startsWith("https:") || !loopback;
}
