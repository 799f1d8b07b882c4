/**
 * `gatehouse serve`: the running process around the gateway. Opens the storage, builds the
 * gateway (app.ts), listens (the TCP front, HTTPS, the metrics listener), watches the trace
 * exporter, and handles the signals: SIGTERM and SIGINT stop within the grace period, SIGHUP
 * reads the configuration again (a bad file changes nothing).
 */
import { createGateway } from "./app.ts";
import { loadConfigFile } from "./config/load.ts";
import { ConfigError } from "./config/issues.ts";
import type { ResolvedConfig } from "./config/types.ts";
import { systemClock } from "./core/clock.ts";
import { createLogger, type Logger } from "./observability/logger.ts";
import type { LineWriter } from "./observability/line_writer.ts";
import { EXPOSITION_CONTENT_TYPE } from "./observability/metrics.ts";
import { otlpTracesEndpoint, watchTraceExport } from "./observability/export_watch.ts";
import { TRACING } from "./observability/tracing.ts";
import { tcpProbe } from "./net/tcp_probe.ts";
import { openStorage } from "./store/open.ts";
import { monitorStore, StorageMonitor } from "./store/monitored.ts";
import { showStorage } from "./core/storage_url.ts";
import { type PublicServer, servePublic } from "./net/public_server.ts";
import { connectionCaps, openFileLimit } from "./net/descriptors.ts";
import { type Https, startHttps } from "./net/tls/https.ts";
import { VERSION } from "./version.ts";
import { EXIT } from "./cli/arguments.ts";
import { cannotListen } from "./cli/listen_failure.ts";

/**
 * What a reload (SIGHUP) leaves as it is: the listeners, the storage and the TLS settings are
 * opened once. README.md and docs/deploy.md name this list; tests/docs_test.ts holds them to it.
 */
export const RESTART_ONLY = [
  "listen",
  "connections",
  "storage",
  "storageOptions", // storagePool, storageTimeout, storageCaFile in the file
  "metrics",
  "tls",
  // The console's own listener is opened once; its sign-in callback lives at admin.url.
  "admin.listen",
  "admin.url",
] as const;

/** The value of a RESTART_ONLY setting (`key` or `section.key`) in a configuration. */
function settingAt(config: ResolvedConfig, path: string): unknown {
  return path.split(".").reduce<unknown>(
    (value, key) =>
      typeof value === "object" && value !== null
        ? (value as Record<string, unknown>)[key]
        : undefined,
    config,
  );
}

export interface ServeOptions {
  configPath: string;
  /** `--port N`, kept for reloads (a reload reads the file with it again). */
  port?: number;
  /** Where every log line goes. */
  logLines: LineWriter;
  env: (name: string) => string | undefined;
}

/** A listener of its own beside the gateway's, saying so in the log once it listens. */
function serveBeside(
  listen: { hostname: string; port: number },
  what: string,
  logger: ReturnType<typeof createLogger>,
  handler: (request: Request) => Response | Promise<Response>,
): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve(
    {
      hostname: listen.hostname,
      port: listen.port,
      onListen: () =>
        logger.info(`${what} listening`, { listen: `${listen.hostname}:${listen.port}` }),
    },
    handler,
  );
}

/**
 * The operator console on a listener of its own (`admin.listen`): its paths only, served by the
 * running gateway's console (a reload swaps it; a changed address needs a restart).
 */
function serveConsole(
  listen: { hostname: string; port: number },
  current: () => { handle(request: Request): Promise<Response> } | undefined,
  logger: ReturnType<typeof createLogger>,
): Deno.HttpServer<Deno.NetAddr> {
  return serveBeside(
    listen,
    "console",
    logger,
    (request) => current()?.handle(request) ?? new Response("not found\n", { status: 404 }),
  );
}

/** /metrics on a listener of its own (keep it on a private interface); nothing else there. */
function serveMetrics(
  listen: { hostname: string; port: number },
  gateway: { metrics(): string },
  logger: ReturnType<typeof createLogger>,
): Deno.HttpServer<Deno.NetAddr> {
  return serveBeside(
    listen,
    "metrics",
    logger,
    (request) =>
      new URL(request.url).pathname === "/metrics" && request.method === "GET"
        ? new Response(gateway.metrics(), {
          headers: { "content-type": EXPOSITION_CONTENT_TYPE },
        })
        : new Response("not found\n", { status: 404 }),
  );
}

/** What the file does that is allowed but risky, one line each, at start-up and on reload. */
export function logConfigWarnings(logger: Logger, config: ResolvedConfig, file: string): void {
  for (const warning of config.warnings) {
    logger.warn("configuration warning", {
      file,
      line: warning.line,
      path: warning.path.join("."),
      problem: warning.message,
      hint: warning.hint,
    });
  }
}

/** Serves until stopped by a signal; the exit code. */
export async function serve(config: ResolvedConfig, options: ServeOptions): Promise<number> {
  const { configPath, port, logLines, env } = options;
  const clock = systemClock;
  const logger = createLogger(config.logLevel, logLines, { clock });
  logConfigWarnings(logger, config, configPath);
  let store;
  try {
    store = await openStorage(config.storage, {
      warn: (message, fields) => logger.warn(message, fields),
      clock,
      pool: config.storageOptions.pool,
      timeoutMs: config.storageOptions.timeoutMs,
      caFile: config.storageOptions.caFile,
      holder: config.replicaId,
    });
  } catch (error) {
    // The store's errors name the database without its password; the URL is shown the same way.
    logger.error("cannot open storage", {
      storage: showStorage(config.storage),
      error: (error as Error).message,
      hint:
        "check that the database is up and reachable from here, and the URL, password and sslmode",
    });
    return EXIT.runtime;
  }
  const storageMonitor = new StorageMonitor(clock, {
    down: (fields) => logger.error("storage unreachable", fields),
    back: (fields) => logger.info("storage reachable again", fields),
  });
  store = monitorStore(store, storageMonitor);
  const deps = {
    store,
    storageMonitor,
    logger,
    clock,
    // The audit trail is kept whatever logLevel says.
    auditLogger: createLogger("info", logLines, { clock }),
  };
  let gateway = await createGateway(config, deps);
  const metrics = gateway.carried.metrics;
  // Deno drops spans it cannot export without a word: the log says when the endpoint is away.
  const endpoint = otlpTracesEndpoint(env);
  const probe = () => tcpProbe(endpoint, 5_000, clock);
  const exportWatch = TRACING ? watchTraceExport({ endpoint, probe, clock, logger }) : undefined;
  void exportWatch?.check();
  const events = {
    shed: (reason: string) => metrics.connectionsShed.inc({ reason }),
    timedOut: (limit: string) => metrics.connectionTimeouts.inc({ limit }),
    handshakeFailed: () => metrics.tlsHandshakeFailures.inc(),
  };
  let https: Https | undefined;
  let server: PublicServer;
  // One descriptor budget for the main port and the redirect listener (issue: EMFILE).
  const caps = connectionCaps(
    config.connections.maxConnections,
    config.tls?.redirectHttp !== undefined,
    config.connections.maxConnections === undefined || config.tls?.redirectHttp
      ? openFileLimit()
      : undefined,
  );
  try {
    if (config.tls) {
      https = await startHttps({
        ...config,
        tls: config.tls,
        redirectMaxConnections: caps.redirect,
      }, {
        logger,
        clock,
        events,
        metrics,
        store,
        owner: config.replicaId ?? gateway.carried.instance,
        keys: () => gateway.tlsKeys(),
      });
    }
    if (https) {
      const port = https.port;
      gateway.carried.console.certificateExpiry = () => port.certificate.notAfter;
    }
    server = await servePublic(
      {
        hostname: config.listen.hostname,
        port: config.listen.port,
        limits: { ...config.connections, maxConnections: caps.main },
        front: config.connections.front,
        listener: https?.port,
        logger,
        clock,
        events,
      },
      (request, peer) => gateway.fetch(request, { remoteAddr: { hostname: peer } }),
    );
    metrics.registry.reading(
      "gatehouse_connections_open",
      "Client connections open now.",
      "gauge",
      () => [[{}, server.connections]],
    );
    logger.info("gatehouse listening", {
      version: VERSION,
      listen: `${config.listen.hostname}:${server.addr.port}`,
      maxConnections: server.maxConnections,
      ...(caps.redirect !== undefined && { redirectMaxConnections: caps.redirect }),
      baseUrl: config.baseUrl,
      servers: [...config.servers.keys()],
    });
  } catch (error) {
    logger.error(...cannotListen("listen", config.listen, error));
    await Promise.all([gateway.close(), https?.close()]);
    https?.port.close();
    store.close();
    return EXIT.runtime;
  }
  let metricsServer: Deno.HttpServer<Deno.NetAddr> | undefined;
  let consoleServer: Deno.HttpServer<Deno.NetAddr> | undefined;
  try {
    if (config.admin?.listen) {
      consoleServer = serveConsole(config.admin.listen, () => gateway.adminConsole, logger);
    }
    if (config.metrics.listen) {
      metricsServer = serveMetrics(
        config.metrics.listen,
        { metrics: () => gateway.metrics() },
        logger,
      );
    }
  } catch (error) {
    const which = consoleServer || !config.admin?.listen ? "metrics.listen" : "admin.listen";
    const where = which === "metrics.listen" ? config.metrics.listen! : config.admin!.listen!;
    logger.error(...cannotListen(which, where, error));
    await Promise.all([gateway.close(), server.close(), consoleServer?.shutdown()]);
    store.close();
    return EXIT.runtime;
  }

  const stopped = Promise.withResolvers<void>();
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info("shutting down", { signal, graceMs: config.shutdownGraceMs });
    exportWatch?.stop();
    const deadline = new Promise((resolve) => setTimeout(resolve, config.shutdownGraceMs));
    // Ending sessions closes their streams, so the server's shutdown can finish.
    await Promise.race([
      Promise.all([
        gateway.close(),
        server.shutdown(),
        metricsServer?.shutdown(),
        consoleServer?.shutdown(),
      ]),
      deadline,
    ]);
    // Past the grace, whoever is still connected (a client that stopped reading) is cut off.
    await Promise.race([
      Promise.all([server.close(), https?.close()]),
      new Promise((resolve) => setTimeout(resolve, 1_000)),
    ]);
    store.close();
    logger.info("stopped");
    stopped.resolve();
  };
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    Deno.addSignalListener(signal, () => void stop(signal));
  }

  // SIGHUP (systemctl reload): read the file again; a bad one changes nothing.
  let reloading = false;
  Deno.addSignalListener("SIGHUP", async () => {
    if (reloading || stopping) return;
    reloading = true;
    try {
      const next = await loadConfigFile(configPath, env, { port });
      // The certificate files are read again whatever the file says (renewed on disk).
      void https?.reload();
      const fixed = RESTART_ONLY.filter((key) =>
        JSON.stringify(settingAt(next, key)) !== JSON.stringify(settingAt(gateway.config, key))
      );
      if (fixed.length) {
        logger.warn("these settings change only on restart; the running values stay", { fixed });
      }
      gateway = await createGateway(
        {
          ...next,
          listen: config.listen,
          connections: config.connections,
          storage: config.storage,
          storageOptions: config.storageOptions,
          metrics: config.metrics,
          tls: config.tls,
          // The rest of admin: (who may enter, its path) reloads; where it listens does not.
          admin: next.admin &&
            { ...next.admin, listen: config.admin?.listen, url: config.admin?.url },
        },
        deps,
        gateway,
      );
      logger.info("configuration reloaded", { servers: [...next.servers.keys()] });
      logConfigWarnings(logger, next, configPath);
    } catch (error) {
      if (!(error instanceof ConfigError)) {
        logger.error("configuration reload failed; keeping the running configuration", { error });
      } else {
        for (const issue of error.issues) {
          logger.error("configuration reload refused", {
            file: configPath,
            line: issue.line,
            path: issue.path.join("."),
            problem: issue.message,
            hint: issue.hint,
          });
        }
        logger.error("keeping the running configuration", { errors: error.issues.length });
      }
    } finally {
      reloading = false;
    }
  });
  await stopped.promise;
  return EXIT.ok;
}
