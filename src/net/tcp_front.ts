/**
 * What faces the network. `Deno.serve` reads request heads with no time limit and accepts
 * connections without bound (denoland/deno#3515): a client that dribbles its headers a byte at
 * a time holds a connection for ever, and enough such clients exhaust file descriptors. So the
 * gateway's `Deno.serve` listens on a private unix socket, and this front owns the TCP port:
 *
 * - at most `maxConnections` client connections; at the cap, the one idle longest between
 *   requests (every request it sent answered: response_framing.ts) makes room, else the one
 *   waiting longest for a request head, else the one longest sending a body (no answer owed),
 *   and only when none is any does a newcomer get 503 (over TLS after its handshake);
 * - a request head must arrive whole within `headerTimeout` of its first byte, a body within
 *   `bodyTimeout` of its head; 408 (when nothing went through yet on that connection) or close;
 * - a connection with no request under way and no bytes either way for `idleTimeout` is closed,
 *   one never used too (clients open connections ahead of need; they are the first to make
 *   room at the cap);
 * - a client that takes no bytes for `sendTimeout` while the gateway has some for it is closed
 *   (a stream cut for reading too slowly, or a client that stopped reading, frees its socket);
 * - out of file descriptors (EMFILE), it stops accepting for a moment and carries on.
 *
 * With TLS (tls/tls_port.ts hands over the connections) the front runs each handshake itself,
 * before anything reaches the server: it counts against the cap, may be evicted like a slow
 * head, and must finish within `headerTimeout`.
 *
 * Requests pass through byte for byte but for one header naming the client's address
 * (request_framing.ts), which the server side reads back (`peerOf`). Everything else about
 * HTTP stays `Deno.serve`'s.
 */
import { type Clock, systemClock, type Timer } from "../core/clock.ts";
import { concatBytes } from "../core/streams.ts";
import type { Logger } from "../observability/logger.ts";
import { type FramingError, PEER_HEADER } from "./request_framing.ts";
import { ReadBuffer } from "./read_buffer.ts";
import {
  type ClientConn,
  FrontConnection,
  type FrontEvents,
  type FrontLimits,
  type FrontListener,
  HEADER_TIMEOUT,
  isEmfile,
  refusalResponse,
  Refusals,
  SERVER_REFUSES,
  type TimeLimit,
  TOO_MANY,
  writeAll,
} from "./front_connection.ts";

export type { FrontEvents, FrontLimits, FrontListener, TimeLimit } from "./front_connection.ts";

export interface TcpFrontOptions {
  hostname: string;
  port: number;
  /** The unix socket `Deno.serve` listens on. */
  upstream: string;
  limits: FrontLimits;
  logger: Logger;
  events?: FrontEvents;
  /** The clock the limits are measured and checked with. */
  clock?: Clock;
  /** Accept from this instead of a new TCP listener on hostname:port (the TLS port). */
  listener?: FrontListener;
}

/** How often limits are checked: every connection's deadlines are looked at once a tick. */
const TICK_MS = 500;
/** After an accept failed for want of file descriptors, wait this long before the next. */
const EMFILE_PAUSE_MS = 100;
/** Per connection, a parked read each way: small at first, as idle streams are many. */
const INBOUND_BUFFER = { initial: 1024, most: 4 * 1024 };
const OUTBOUND_BUFFER = { initial: 2 * 1024, most: 16 * 1024 };
/** The client address the front put on a request; undefined for one that did not come through it. */
export function peerOf(request: Request): string | undefined {
  return request.headers.get(PEER_HEADER) ?? undefined;
}

export class TcpFront {
  readonly #connections = new Set<FrontConnection>();
  readonly #clock: Clock;
  #ticker?: Timer;
  #accepting: Promise<void>;
  #closing = false;
  readonly #refusals: Refusals;
  /** Troubles reported once per burst: when each was last logged, and how often since. */
  readonly #reported = new Map<string, { at: number; count: number }>();

  private constructor(
    readonly listener: FrontListener,
    readonly options: TcpFrontOptions,
  ) {
    this.#clock = options.clock ?? systemClock;
    this.#refusals = new Refusals(this.#clock);
    this.#accepting = this.#acceptLoop();
  }

  /** Listens on the TCP address and starts passing connections to `upstream`. */
  static listen(options: TcpFrontOptions): TcpFront {
    const listener = options.listener ??
      Deno.listen({ hostname: options.hostname, port: options.port });
    return new TcpFront(listener, options);
  }

  get addr(): Deno.NetAddr {
    return this.listener.addr as Deno.NetAddr;
  }

  /** Sends new connections to another unix socket (the server behind was started again). */
  setUpstream(path: string): void {
    this.options.upstream = path;
  }

  /** Client connections open now. */
  get connections(): number {
    return this.#connections.size;
  }

  /** Stops accepting; open connections go on until `closeAll` (or they end). */
  async stopAccepting(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    try {
      this.listener.close();
    } catch { /* closed already */ }
    await this.#accepting;
  }

  /** Closes every client connection, whatever it is doing. */
  closeAll(): void {
    for (const connection of this.#connections) connection.close();
    this.#ticker?.clear();
    this.#ticker = undefined;
  }

  async #acceptLoop(): Promise<void> {
    while (!this.#closing) {
      let client: ClientConn;
      try {
        client = await this.listener.accept();
      } catch (error) {
        if (this.#closing || error instanceof Deno.errors.BadResource) return;
        if (!isEmfile(error)) {
          this.options.logger.warn("could not accept a connection", { error });
          continue;
        }
        this.#outOfDescriptors();
        // A platform timer: a breather before the next accept, not a limit on anyone's time.
        await new Promise((resolve) => setTimeout(resolve, EMFILE_PAUSE_MS));
        continue;
      }
      if (this.#connections.size >= this.options.limits.maxConnections) {
        // Full: make room (#victim). An idle one's client opens another when it needs one, as
        // with nginx; answers under way are never cut for a newcomer.
        const victim = this.#victim();
        if (victim) {
          this.options.events?.shed?.("evicted");
          victim.close();
        } else {
          this.options.events?.shed?.("connection_limit");
          this.#refuse(client, TOO_MANY);
          continue;
        }
      }
      void this.#serve(client);
    }
  }

  /**
   * Whom to close for a newcomer, in one pass: the connection idle longest between requests,
   * else the one waiting longest for a request head, else the one longest sending a body with
   * no answer owed but its own.
   */
  #victim(): FrontConnection | undefined {
    let idlest: FrontConnection | undefined;
    let slowestHead: FrontConnection | undefined;
    let slowestBody: FrontConnection | undefined;
    for (const connection of this.#connections) {
      if (connection.betweenRequests) {
        if (!idlest || connection.lastActivity < idlest.lastActivity) idlest = connection;
      } else if (idlest) continue;
      else if (connection.waitingForHead && !connection.closed) {
        if (!slowestHead || connection.phaseSince < slowestHead.phaseSince) {
          slowestHead = connection;
        }
      } else if (!slowestHead && connection.inBodyOnly) {
        if (!slowestBody || connection.phaseSince < slowestBody.phaseSince) {
          slowestBody = connection;
        }
      }
    }
    return idlest ?? slowestHead ?? slowestBody;
  }

  #outOfDescriptors(): void {
    this.options.events?.shed?.("no_descriptors");
    this.#report(
      "out of file descriptors: connections wait in the listen queue until some close " +
        "(raise LimitNOFILE, or lower connections.max)",
    );
  }

  /** Logs a trouble once per burst (10 s), with how often it happened, not once per connection. */
  #report(message: string, error?: unknown): void {
    const now = this.#clock.now();
    const seen = this.#reported.get(message) ?? { at: 0, count: 0 };
    seen.count++;
    this.#reported.set(message, seen);
    if (now - seen.at < 10_000) return;
    this.options.logger.error(message, { times: seen.count, open: this.#connections.size, error });
    seen.at = now;
    seen.count = 0;
  }

  /** Answers and closes a connection without reading from it. */
  #refuse(client: ClientConn, response: Uint8Array): void {
    this.#refusals.refuse(client, response, this.options.limits.headerTimeoutMs);
  }

  async #serve(client: ClientConn): Promise<void> {
    const peer = (client.remoteAddr as Deno.NetAddr).hostname;
    const connection = new FrontConnection(client, peer, this.#clock.now());
    this.#connections.add(connection);
    this.#ticker ??= this.#clock.setInterval(() => this.#tick(), TICK_MS);
    try {
      if ("handshake" in client) {
        // The handshake is the front's, timed like a request head; nothing goes upstream first.
        connection.handshaking = true;
        try {
          await (client as ClientConn & Pick<Deno.TlsConn, "handshake">).handshake();
        } catch {
          if (!connection.closed) this.options.events?.handshakeFailed?.();
          return;
        }
        connection.handshaking = false;
        connection.phaseSince = connection.lastActivity = this.#clock.now();
      } else (client as Deno.TcpConn).setNoDelay(true);
      try {
        connection.upstream = await Deno.connect({
          transport: "unix",
          path: this.options.upstream,
        });
      } catch (error) {
        if (isEmfile(error)) this.#outOfDescriptors();
        else {this.#report(
            "the front could not reach the HTTP server (it may be restarting)",
            error,
          );}
        await writeAll(client, TOO_MANY).catch(() => {});
        return;
      }
      await Promise.all([this.#inbound(connection), this.#outbound(connection)]);
    } finally {
      connection.close();
      this.#connections.delete(connection);
      if (this.#connections.size === 0) {
        this.#ticker?.clear();
        this.#ticker = undefined;
      }
    }
  }

  /** Client to server: requests, framed so that their timing can be checked. */
  async #inbound(connection: FrontConnection): Promise<void> {
    const { client, framing } = connection;
    const upstream = connection.upstream!;
    const buffer = new ReadBuffer(INBOUND_BUFFER.initial, INBOUND_BUFFER.most);
    try {
      for (;;) {
        const n = await client.read(buffer.bytes);
        if (n === null) break;
        const now = this.#clock.now();
        connection.lastActivity = now;
        const before = framing.phase;
        const result = framing.push(buffer.bytes.subarray(0, n));
        if (result.error && !result.afterAnswers) {
          if (!connection.forwardedAny) return await this.#refuseRequest(connection, result.error);
          // Requests went through in earlier reads and may still be answering: closing now
          // lost their answers (a call that ran, its result never seen). What of them ended
          // in this read goes on (nothing of the refused one), then a head the server refuses:
          // it answers those requests, then 400 in the refused one's place, and closes;
          // nothing more is read from here.
          await writeAll(upstream, concatBytes([...result.forward, SERVER_REFUSES]));
          framing.phase = "idle";
          return;
        }
        if (framing.phase !== before || result.heads > 0) connection.phaseSince = now;
        // Owed before they are sent: the answer may be read before the write returns.
        for (const isHead of result.headMethod) connection.responses.expect(isHead);
        // One write for what one read brought (a head and its body, usually): a syscall each.
        if (result.forward.length === 1) await writeAll(upstream, result.forward[0]);
        else if (result.forward.length > 1) await writeAll(upstream, concatBytes(result.forward));
        if (result.heads > 0) connection.forwardedAny = true;
        if (result.error) {
          // Requests came whole before the refused one: the last asks the server to close
          // once it has answered them all, and the refusal follows (#outbound). Nothing more
          // is read from this client; no time limit of a request head runs meanwhile.
          connection.refusalAfterAnswers = result.error;
          framing.phase = "idle";
          return;
        }
        buffer.filled(n); // only now: what went on above was written from the old bytes
      }
      // The client is done sending; the server may still be answering.
      if (framing.phase === "idle" && connection.forwardedAny && !connection.responses.opaque) {
        // A half-close after whole requests: Deno.serve drops a connection whose end it reads
        // before it has answered, the answer with it. So the server is not told; the
        // connection closes once every request is answered (#outbound), or now if all are.
        connection.clientEnded = true;
        if (connection.responses.pending === 0 && connection.writingSince === 0) {
          connection.close();
        }
        return;
      }
      await upstream.closeWrite().catch(() => {});
    } catch {
      connection.close();
    }
  }

  /** Server to client: answers, passed on as they come; a client that stalls is timed. */
  async #outbound(connection: FrontConnection): Promise<void> {
    const { client } = connection;
    const upstream = connection.upstream!;
    const buffer = new ReadBuffer(OUTBOUND_BUFFER.initial, OUTBOUND_BUFFER.most);
    try {
      for (;;) {
        const n = await upstream.read(buffer.bytes);
        if (n === null) {
          const refusal = connection.refusalAfterAnswers;
          if (refusal) await writeAll(client, refusalResponse(refusal));
          break;
        }
        connection.writingSince = connection.lastActivity = this.#clock.now();
        connection.responses.push(buffer.bytes.subarray(0, n));
        await writeAll(client, buffer.bytes.subarray(0, n));
        connection.writingSince = 0;
        buffer.filled(n);
        // A client that half-closed has had every answer it asked for.
        if (connection.clientEnded && connection.responses.pending === 0) break;
      }
    } catch { /* either side went away */ }
    connection.close();
  }

  async #refuseRequest(connection: FrontConnection, error: FramingError): Promise<void> {
    if (!connection.forwardedAny) {
      await writeAll(connection.client, refusalResponse(error)).catch(() => {});
    }
    connection.close();
  }

  #tick(): void {
    const now = this.#clock.now();
    const { headerTimeoutMs, bodyTimeoutMs, idleTimeoutMs, sendTimeoutMs } = this.options.limits;
    for (const connection of this.#connections) {
      // Closed but not yet gone from the set (its loops are still winding down): once is enough.
      if (connection.closed) continue;
      if (connection.handshaking) {
        if (now - connection.phaseSince > headerTimeoutMs) this.#timeout(connection, "handshake");
      } else if (connection.writingSince > 0 && now - connection.writingSince > sendTimeoutMs) {
        this.#timeout(connection, "send");
      } else if (
        connection.framing.phase === "head" && now - connection.phaseSince > headerTimeoutMs
      ) {
        if (!connection.forwardedAny) this.#refuse(connection.client, HEADER_TIMEOUT);
        this.#timeout(connection, "header", !connection.forwardedAny);
      } else if (
        connection.framing.phase === "body" && now - connection.phaseSince > bodyTimeoutMs
      ) {
        this.#timeout(connection, "body");
      } else if (
        // Never used yet counts as idle, not as a slow head: clients open connections ahead of
        // need and keep them in a pool, and a 408 there fails the request they later send on it.
        connection.framing.phase === "idle" && connection.writingSince === 0 &&
        now - connection.lastActivity > idleTimeoutMs
      ) {
        this.#timeout(connection, "idle");
      }
    }
  }

  #timeout(connection: FrontConnection, which: TimeLimit, answered = false) {
    this.options.events?.timedOut?.(which);
    if (which !== "idle") {
      this.options.logger.info("connection closed by a time limit", {
        // A handshake is held to the head's limit.
        limit: `connections.${which === "handshake" ? "header" : which}Timeout`,
        peer: (connection.client.remoteAddr as Deno.NetAddr).hostname,
      });
    }
    if (answered) {
      // #refuse closes the client once the 408 is written; the server side goes now.
      connection.closed = true;
      try {
        connection.upstream?.close();
      } catch { /* closed already */ }
      return;
    }
    connection.close();
  }
}
