/**
 * The composition root: resolved config + adapters → the gateway's `fetch` and `close`.
 * The only place that constructs concrete implementations.
 */
import type { ResolvedConfig } from "./config/types.ts";
import type { ServerName } from "./core/ids.ts";
import type { Clock } from "./core/clock.ts";
import { Secret } from "./core/secret.ts";
import { randomBase64Url } from "./crypto/random.ts";
import { createAuthenticator, type ServerAuthenticator } from "./http/bearer.ts";
import { buildRoutes } from "./http/routes.ts";
import { SessionRegistry } from "./mcp/sessions.ts";
import type { Logger } from "./observability/logger.ts";
import { KEYS } from "./store/keys.ts";
import type { Store } from "./store/store.ts";

export interface Gateway {
  fetch(request: Request, info?: { remoteAddr?: { hostname?: string } }): Promise<Response>;
  sessions: SessionRegistry;
  /** Ends every session and stops every backend (within the shutdown grace). */
  close(): Promise<void>;
}

export interface GatewayDeps {
  store: Store;
  logger: Logger;
  clock: Clock;
}

/** Grace a stdio child gets between SIGTERM and SIGKILL; bounded by the shutdown grace. */
const KILL_GRACE_MS = 2_000;

export async function createGateway(config: ResolvedConfig, deps: GatewayDeps): Promise<Gateway> {
  const { logger, store, clock } = deps;
  await resolveMasterSecret(config, store, logger);
  const sessions = new SessionRegistry({
    limits: config.limits,
    logger,
    now: () => clock.now(),
    killGraceMs: Math.min(KILL_GRACE_MS, config.shutdownGraceMs),
  });
  const authenticators = new Map<ServerName, ServerAuthenticator>();
  for (const server of config.servers.values()) {
    authenticators.set(server.name, await createAuthenticator(server));
  }
  const app = buildRoutes({ config, sessions, authenticators, logger });
  return {
    sessions,
    fetch: async (request, info) =>
      await app.fetch(request, { remoteAddress: info?.remoteAddr?.hostname }),
    close: () => sessions.closeAll("the gateway is shutting down"),
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
  logger.warn(
    "no secret configured: using one generated and kept in storage; set secret: ${GATEHOUSE_SECRET} to manage it yourself",
  );
  return new Secret(stored);
}
