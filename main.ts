/**
 * Gatehouse command line: `serve` (default), `check`, `health`, `schema`, `grants` and `tools`
 * (in src/cli/), `--version`, `--help`.
 *
 * Exit codes: 0 success; 1 invalid configuration; 2 bad command line; 3 failed to start or run
 * (storage unavailable, address in use).
 */
import { createGateway } from "./src/app.ts";
import { loadConfigFile } from "./src/config/load.ts";
import { ConfigError, formatIssues } from "./src/config/issues.ts";
import type { ResolvedConfig } from "./src/config/types.ts";
import { systemClock } from "./src/core/clock.ts";
import { createLogger, type Logger } from "./src/observability/logger.ts";
import { batchedLineWriter, writeStderr } from "./src/observability/line_writer.ts";
import { EXPOSITION_CONTENT_TYPE } from "./src/observability/metrics.ts";
import { otlpTracesEndpoint, watchTraceExport } from "./src/observability/export_watch.ts";
import { TRACING } from "./src/observability/tracing.ts";
import { tcpProbe } from "./src/net/tcp_probe.ts";
import { openKvStore } from "./src/store/kv.ts";
import { type PublicServer, servePublic } from "./src/net/public_server.ts";
import { type Https, startHttps } from "./src/net/tls/https.ts";
import { checkTlsFiles } from "./src/net/tls/certificate.ts";
import { probeHealthTls } from "./src/net/tls/health_probe.ts";
import { COMMIT, VERSION } from "./src/version.ts";
import { CONFIG_SCHEMA } from "./src/config/schema.ts";
import { runGrantsCommand } from "./src/cli/grants.ts";
import { cannotListen } from "./src/cli/listen_failure.ts";
import { runToolsCommand } from "./src/cli/tools.ts";

const USAGE = `Gatehouse ${VERSION}: an OAuth gateway in front of MCP servers.

Usage:
  gatehouse [serve] [--config PATH] [--port N]   start the gateway (N replaces listen:'s port)
  gatehouse check [--config PATH] [--port N]     validate the configuration and exit
  gatehouse health [--config PATH] [--url URL]
                                      exit 0 if the gateway (at URL, else at the
                                      configuration's listen address) answers /health
  gatehouse schema                    print the configuration's JSON Schema
  gatehouse grants list [--user EMAIL] [--json]
                                      the live grants on the configured storage
  gatehouse grants revoke --user EMAIL | --client ID | --grant ID
                                      revoke them (running gateways: within 10 s);
                                      gatehouse grants --help says more
  gatehouse tools list|diff|approve SERVER [TOOL]
                                      tools held because their definitions changed
                                      since approved: see, compare, approve them;
                                      gatehouse tools --help says more
  gatehouse --version                 print the version and commit
  gatehouse --help                    print this help

The configuration is PATH, else $GATEHOUSE_CONFIG, else ./config.yaml.

Exit codes: 0 ok, 78 invalid configuration, 64 bad command line, 3 failed to start or run
(1 is an unexpected error).`;

/**
 * The two codes a restart cannot fix are sysexits' EX_CONFIG and EX_USAGE, so that a service
 * manager can refuse to restart on them alone: 1 is what Deno exits with on an uncaught error,
 * which a restart may well fix (a momentary lack of file descriptors, say).
 */
export const EXIT = { ok: 0, invalidConfig: 78, usage: 64, runtime: 3 } as const;

interface Command {
  name: "serve" | "check" | "health" | "schema" | "version" | "help";
  configPath: string;
  url?: string;
  /** `--port N`: replaces the port of `listen:` (a baseUrl left out follows it). */
  port?: number;
}

const SUBCOMMANDS = ["serve", "check", "health", "schema"] as const;

function env(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

function parseArgs(args: string[]): Command | string {
  let name: Command["name"] | undefined;
  let url: string | undefined;
  let port: number | undefined;
  let configPath = env("GATEHOUSE_CONFIG") ?? "./config.yaml";
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    // `deno task dev -- --port 9000` passes the `--` on.
    if (arg === "--") continue;
    if (arg === "--help" || arg === "-h") return { name: "help", configPath };
    if (arg === "--version" || arg === "-V") return { name: "version", configPath };
    if (arg === "--config" || arg === "-c") {
      const value = args[++i];
      if (!value) return "--config needs a path";
      configPath = value;
    } else if (arg.startsWith("--config=")) {
      configPath = arg.slice("--config=".length);
    } else if (arg === "--port" || arg.startsWith("--port=")) {
      const value = arg === "--port" ? args[++i] : arg.slice("--port=".length);
      if (!/^\d{1,5}$/.test(value ?? "") || Number(value) > 65535) {
        return `--port needs a port number from 0 to 65535, got ${value ?? "nothing"}`;
      }
      port = Number(value);
    } else if (arg === "--url" && name === "health") {
      url = args[++i];
      if (!url) return "--url needs a URL";
    } else if ((SUBCOMMANDS as readonly string[]).includes(arg) && !name) {
      name = arg as Command["name"];
    } else {
      return `unknown argument "${arg}"`;
    }
  }
  return { name: name ?? "serve", configPath, url, port };
}

async function load(path: string, port?: number): Promise<ResolvedConfig | undefined> {
  try {
    return await loadConfigFile(path, env, { port });
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      return undefined;
    }
    throw error;
  }
}

/** /metrics on a listener of its own (keep it on a private interface); nothing else there. */
function serveMetrics(
  listen: { hostname: string; port: number },
  gateway: { metrics(): string },
  logger: ReturnType<typeof createLogger>,
): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve(
    {
      hostname: listen.hostname,
      port: listen.port,
      onListen: () =>
        logger.info("metrics listening", { listen: `${listen.hostname}:${listen.port}` }),
    },
    (request) =>
      new URL(request.url).pathname === "/metrics" && request.method === "GET"
        ? new Response(gateway.metrics(), {
          headers: { "content-type": EXPOSITION_CONTENT_TYPE },
        })
        : new Response("not found\n", { status: 404 }),
  );
}

/** What the file does that is allowed but risky, one line each, at start-up and on reload. */
function logConfigWarnings(logger: Logger, config: ResolvedConfig, file: string): void {
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

/** Every log line of `serve` goes through here, a turn's lines in one write. */
const logLines = batchedLineWriter(writeStderr);
globalThis.addEventListener("unload", () => logLines.flush());

async function serve(config: ResolvedConfig, configPath: string, port?: number): Promise<number> {
  const clock = systemClock;
  const logger = createLogger(config.logLevel, logLines, { clock });
  logConfigWarnings(logger, config, configPath);
  let store;
  try {
    store = await openKvStore(config.storage, {
      warn: (message, fields) => logger.warn(message, fields),
      clock,
    });
  } catch (error) {
    logger.error("cannot open storage", { storage: config.storage, error });
    return EXIT.runtime;
  }
  const deps = {
    store,
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
  try {
    if (config.tls) {
      https = await startHttps({ ...config, tls: config.tls }, {
        logger,
        clock,
        events,
        metrics,
        store,
        owner: config.replicaId ?? gateway.carried.instance,
        keys: () => gateway.tlsKeys(),
      });
    }
    server = await servePublic(
      {
        hostname: config.listen.hostname,
        port: config.listen.port,
        limits: config.connections,
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
  try {
    if (config.metrics.listen) {
      metricsServer = serveMetrics(
        config.metrics.listen,
        { metrics: () => gateway.metrics() },
        logger,
      );
    }
  } catch (error) {
    logger.error(...cannotListen("metrics.listen", config.metrics.listen!, error));
    await Promise.all([gateway.close(), server.close()]);
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
      Promise.all([gateway.close(), server.shutdown(), metricsServer?.shutdown()]),
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
      const fixed = (["listen", "connections", "storage", "metrics", "tls"] as const).filter((
        key,
      ) => JSON.stringify(next[key]) !== JSON.stringify(gateway.config[key]));
      if (fixed.length) {
        logger.warn("these settings change only on restart; the running values stay", { fixed });
      }
      gateway = await createGateway(
        {
          ...next,
          listen: config.listen,
          connections: config.connections,
          storage: config.storage,
          metrics: config.metrics,
          tls: config.tls,
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

/** `check`: what a changed tool definition meets on each server, and why (issue: tool integrity). */
function toolChangesLines(config: ResolvedConfig): string[] {
  const lines: string[] = [];
  for (const server of config.servers.values()) {
    if (server.transport === "aggregate") continue;
    const why = !server.toolChangesDefaulted
      ? "as configured"
      : server.toolChanges === "hold"
      ? "default: its host may be someone else's"
      : "default: a local or private backend";
    const pins = server.toolPins ? `, ${Object.keys(server.toolPins).length} pinned` : "";
    lines.push(`  ${server.name}: toolChanges ${server.toolChanges} (${why}${pins})`);
  }
  return lines;
}

/** For container health checks and scripts: 0 when GET `url` answers 200 within 5 s. */
async function checkHealth(url: string): Promise<number> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    await response.body?.cancel();
    if (response.ok) return EXIT.ok;
    console.error(`gatehouse: ${url} answered ${response.status}`);
  } catch (error) {
    console.error(`gatehouse: ${url} did not answer: ${(error as Error).message}`);
  }
  return EXIT.runtime;
}

/** The storage `grants` and `tools` work on: the gateway's own, never a new empty one by mistake. */
async function openConfiguredStore(config: ResolvedConfig) {
  const local = config.storage !== ":memory:" && !/^https?:\/\//.test(config.storage);
  if (local) {
    try {
      await Deno.stat(config.storage);
    } catch {
      throw new Error(
        "there is no such file; pass the running gateway's configuration with --config, or run the command where its storage is",
      );
    }
  }
  return await openKvStore(config.storage, { clock: systemClock });
}

async function main(args: string[]): Promise<number> {
  if (args[0] === "grants") {
    return await runGrantsCommand(args.slice(1), {
      loadConfig: load,
      openStore: openConfiguredStore,
      clock: systemClock,
      defaultConfigPath: env("GATEHOUSE_CONFIG") ?? "./config.yaml",
      out: (line) => console.log(line),
      err: (line) => console.error(line),
    });
  }
  if (args[0] === "tools") {
    return await runToolsCommand(args.slice(1), {
      loadConfig: load,
      openStore: openConfiguredStore,
      clock: systemClock,
      defaultConfigPath: env("GATEHOUSE_CONFIG") ?? "./config.yaml",
      out: (line) => console.log(line),
      err: (line) => console.error(line),
    });
  }
  const command = parseArgs(args);
  if (typeof command === "string") {
    console.error(`gatehouse: ${command}\n\n${USAGE}`);
    return EXIT.usage;
  }
  if (command.name === "help") {
    console.log(USAGE);
    return EXIT.ok;
  }
  if (command.name === "version") {
    console.log(`gatehouse ${VERSION} (commit ${COMMIT})`);
    return EXIT.ok;
  }
  if (command.name === "schema") {
    console.log(JSON.stringify(CONFIG_SCHEMA, null, 2));
    return EXIT.ok;
  }
  if (command.name === "health" && command.url) return await checkHealth(command.url);
  const config = await load(command.configPath, command.port);
  if (!config) return EXIT.invalidConfig;
  if (command.name === "health") {
    const { hostname, port } = config.listen;
    const host = hostname === "0.0.0.0" ? "127.0.0.1" : hostname === "::" ? "[::1]" : hostname;
    if (!config.tls) return await checkHealth(`http://${host}:${port}/health`);
    const status = await probeHealthTls(
      host.replace(/^\[|\]$/g, ""),
      port,
      new URL(config.baseUrl).hostname,
    )
      .catch((error) =>
        console.error(`gatehouse: https://${host}:${port} did not answer: ${error.message}`)
      );
    if (status === 200) return EXIT.ok;
    if (status) console.error(`gatehouse: https://${host}:${port}/health answered ${status}`);
    return EXIT.runtime;
  }
  if (command.name === "check") {
    if (config.tls) {
      // What serve would refuse at start: unreadable files, a key of another certificate.
      try {
        await checkTlsFiles(config.tls);
      } catch (error) {
        console.error(`${command.configPath}: tls: ${(error as Error).message}`);
        return EXIT.invalidConfig;
      }
    }
    console.log(
      `${command.configPath}: ok (${config.servers.size} server${
        config.servers.size === 1 ? "" : "s"
      }: ${[...config.servers.keys()].join(", ")})`,
    );
    for (const line of toolChangesLines(config)) console.log(line);
    if (config.warnings.length) {
      console.error(formatIssues(config.warnings, command.configPath, "warning"));
    }
    return EXIT.ok;
  }
  return await serve(config, command.configPath, command.port);
}

if (import.meta.main) {
  const code = await main(Deno.args);
  logLines.flush();
  Deno.exit(code);
}
