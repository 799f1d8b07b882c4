/**
 * The gateway's listener for clients: `Deno.serve` on a unix socket in a private directory,
 * behind the TCP front that enforces connection limits (tcp_front.ts). The one place that
 * decides how the gateway meets the network; the metrics listener and tests use `Deno.serve`
 * directly, as nothing there listens to strangers.
 */
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../observability/logger.ts";
import { defaultMaxConnections, openFileLimit } from "./descriptors.ts";
import {
  type FrontEvents,
  type FrontLimits,
  type FrontListener,
  peerOf,
  TcpFront,
} from "./tcp_front.ts";

export interface PublicServer {
  /** Where clients connect (the port the kernel chose, when 0 was asked for). */
  addr: Deno.NetAddr;
  /** The connection cap in force (configured, or sized from the open-file limit). */
  maxConnections: number;
  /** Client connections open now. */
  readonly connections: number;
  /** Stops accepting and waits for answers under way (race it against a grace period). */
  shutdown(): Promise<void>;
  /** Closes whatever connections are left and removes the socket's directory. */
  close(): Promise<void>;
}

export interface PublicServerOptions {
  hostname: string;
  port: number;
  /** Deno.serve, or a test's wrapper of it. */
  serve?: typeof Deno.serve;
  /** `maxConnections` left out: sized from the open-file limit. */
  limits: Omit<FrontLimits, "maxConnections"> & { maxConnections?: number };
  logger: Logger;
  events?: FrontEvents;
  /** The clock the connection limits are measured with; the system's when left out. */
  clock?: Clock;
  /**
   * false (`connections.front: false`): `Deno.serve` owns the port itself, without the
   * front's limits and head checks, for deployments behind a proxy that enforces its own.
   */
  front?: boolean;
  /** Client connections from here instead of a TCP listener of the front's own (the TLS port). */
  listener?: FrontListener;
}

/** After the server behind stopped for want of file descriptors, how soon to try again. */
const RESTART_PAUSE_MS = 250;

export async function servePublic(
  options: PublicServerOptions,
  handler: (request: Request, peer: string | undefined) => Response | Promise<Response>,
): Promise<PublicServer> {
  if (options.front === false) return await serveWithoutFront(options, handler);
  // mkdtemp makes the directory 0700: only this user can reach the socket, so every request
  // on it came through the front, and its peer header can be trusted.
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-" });
  let generation = 0;
  let closing = false;
  let front: TcpFront | undefined;
  const servers = new Set<Deno.HttpServer<Deno.UnixAddr>>();

  /**
   * `Deno.serve` stops for good when an accept fails, out of file descriptors among others
   * (its `finished` rejects): start another on a new socket and point the front at it, so
   * the gateway serves again once descriptors are free instead of dying.
   */
  const start = async (): Promise<string> => {
    const path = `${dir}/http-${generation++}.sock`;
    const listening = Promise.withResolvers<void>();
    const serve = options.serve ?? Deno.serve;
    const server = serve(
      { transport: "unix", path, onListen: () => listening.resolve() },
      (request) => handler(request, peerOf(request)),
    );
    servers.add(server);
    server.finished.then(() => servers.delete(server), async (error) => {
      servers.delete(server);
      if (closing) return;
      options.logger.error("the HTTP server stopped; starting it again", { error });
      options.events?.shed?.("no_descriptors");
      for (;;) {
        // A platform timer: a pause between tries, not a limit on anyone's time.
        await new Promise((resolve) => setTimeout(resolve, RESTART_PAUSE_MS));
        if (closing) return;
        try {
          front?.setUpstream(await start());
          options.logger.info("the HTTP server is serving again");
          return;
        } catch (again) {
          options.logger.warn("could not start the HTTP server yet", { error: again });
        }
      }
    });
    await listening.promise;
    return path;
  };

  let path: string;
  try {
    path = await start();
  } catch (error) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw error;
  }
  const maxConnections = options.limits.maxConnections ?? defaultMaxConnections(openFileLimit());
  try {
    front = TcpFront.listen({
      hostname: options.hostname,
      port: options.port,
      upstream: path,
      limits: { ...options.limits, maxConnections },
      logger: options.logger,
      events: options.events,
      clock: options.clock,
      listener: options.listener,
    });
  } catch (error) {
    closing = true;
    await Promise.all([...servers].map((server) => server.shutdown()));
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw error;
  }
  const tcp = front;
  const shutdownServers = () => Promise.all([...servers].map((server) => server.shutdown()));
  return {
    addr: tcp.addr,
    maxConnections,
    get connections() {
      return tcp.connections;
    },
    async shutdown() {
      closing = true;
      await tcp.stopAccepting();
      await shutdownServers();
    },
    async close() {
      closing = true;
      await tcp.stopAccepting();
      tcp.closeAll();
      await shutdownServers();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/**
 * `Deno.serve` on the TCP port, nothing in front: no timeouts, no connection cap, no head
 * checks (config/connections.ts warns so). The peer is the socket's remote address.
 */
async function serveWithoutFront(
  options: PublicServerOptions,
  handler: (request: Request, peer: string | undefined) => Response | Promise<Response>,
): Promise<PublicServer> {
  const listening = Promise.withResolvers<Deno.NetAddr>();
  let open = 0;
  const serve = options.serve ?? Deno.serve;
  const server = serve(
    {
      hostname: options.hostname,
      port: options.port,
      onListen: (addr) => listening.resolve(addr),
    },
    (request, info) => {
      open++;
      const done = () => open--;
      return Promise.resolve(handler(request, info.remoteAddr.hostname)).finally(done);
    },
  );
  const addr = await Promise.race([
    listening.promise,
    server.finished.then(() => {
      throw new Error("Deno.serve stopped before it listened");
    }),
  ]);
  return {
    addr,
    maxConnections: Infinity,
    // Requests being handled: Deno.serve does not say how many connections it holds.
    get connections() {
      return open;
    },
    shutdown: () => server.shutdown(),
    async close() {
      await server.shutdown();
    },
  };
}
