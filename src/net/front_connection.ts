/**
 * One client connection through the TCP front (tcp_front.ts): its request framing, where its
 * answers end (response_framing.ts), when its current phase began and when it was last active,
 * its two sockets; the front's limits and events; and the answers the front writes itself when
 * it refuses a connection (`Refusals`: over TLS after the handshake) or a request.
 */
import type { Clock } from "../core/clock.ts";
import { type FramingError, RequestFraming } from "./request_framing.ts";
import { ResponseFraming } from "./response_framing.ts";

const encoder = new TextEncoder();

export function errorResponse(status: number, title: string, code: string, description: string) {
  const body = JSON.stringify({ error: code, error_description: description });
  return encoder.encode(
    `HTTP/1.1 ${status} ${title}\r\ncontent-type: application/json\r\n` +
      `content-length: ${encoder.encode(body).length}\r\nconnection: close\r\n` +
      (status === 503 ? "retry-after: 1\r\n" : "") + `\r\n${body}`,
  );
}

/** The answer to a request the front refuses. */
export function refusalResponse(error: FramingError): Uint8Array {
  const title = error.status === 431 ? "Request Header Fields Too Large" : "Bad Request";
  return errorResponse(error.status, title, "invalid_request", error.reason);
}

export const TOO_MANY = errorResponse(
  503,
  "Service Unavailable",
  "temporarily_unavailable",
  "the gateway holds as many connections as it may (connections.max); try again shortly",
);
export const HEADER_TIMEOUT = errorResponse(
  408,
  "Request Timeout",
  "request_timeout",
  "the request head did not arrive in time (connections.headerTimeout)",
);

/**
 * A request head `Deno.serve` refuses at once (a NUL where the method goes), answering 400 and
 * closing once the requests before it are answered: a refusal that keeps their answers.
 */
export const SERVER_REFUSES = encoder.encode("\0 / HTTP/1.1\r\n\r\n");

export interface FrontLimits {
  maxConnections: number;
  headerTimeoutMs: number;
  bodyTimeoutMs: number;
  idleTimeoutMs: number;
  sendTimeoutMs: number;
}

export interface FrontEvents {
  /**
   * A connection refused at the cap or for want of a socket, or one waiting for its request
   * head dropped at the cap to make room for a new one.
   */
  shed?(reason: "connection_limit" | "evicted" | "no_descriptors"): void;
  /** A connection closed by a limit. */
  timedOut?(which: TimeLimit): void;
  /** A TLS handshake that failed (a client that does not trust the certificate, plain HTTP). */
  handshakeFailed?(): void;
}

export type TimeLimit = "handshake" | "header" | "body" | "idle" | "send";

/** Where client connections come from: a TCP listener, or the TLS port (TLS connections). */
export interface FrontListener {
  accept(): Promise<ClientConn>;
  close(): void;
  readonly addr: Deno.Addr;
}

/** What the front uses of a client connection: a TCP one, or the TLS port's (tls/tls_port.ts). */
export type ClientConn = Pick<Deno.Conn, "read" | "write" | "close" | "remoteAddr">;

export async function writeAll(conn: Pick<Deno.Conn, "write">, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
}

export function isEmfile(error: unknown): boolean {
  return /os error 24|too many open files/i.test(String((error as Error)?.message ?? error));
}

export class FrontConnection {
  readonly framing: RequestFraming;
  /** Where the server's answers end: whether every request forwarded has been answered. */
  readonly responses = new ResponseFraming();
  /** The client half-closed after whole requests: closed once they are answered. */
  clientEnded = false;
  /** When the current phase began (for the first request: when the connection was accepted). */
  phaseSince: number;
  lastActivity: number;
  /** Since when a write to the client has been waiting; 0 when none is. */
  writingSince = 0;
  /** Whether any request has gone through: before that, errors can still be answered. */
  forwardedAny = false;
  upstream?: Deno.Conn;
  /** A refusal to write once the server has answered the requests before it and closed. */
  refusalAfterAnswers?: FramingError;
  closed = false;
  /** A TLS handshake is under way (timed like a request head). */
  handshaking = false;

  constructor(readonly client: ClientConn, peer: string, now: number, maxHeadBytes?: number) {
    this.framing = new RequestFraming(peer, maxHeadBytes);
    this.phaseSince = this.lastActivity = now;
  }

  /**
   * Between requests: every request forwarded has been answered, all of it taken by the client,
   * and nothing of a next one has come. Such a connection may be closed to make room.
   */
  get betweenRequests(): boolean {
    return !this.closed && this.forwardedAny && this.framing.phase === "idle" &&
      this.writingSince === 0 && this.responses.pending === 0 && !this.responses.opaque &&
      this.refusalAfterAnswers === undefined;
  }

  /**
   * Sending a request body, and nothing owed but that request's answer, none of it passed yet:
   * closing it loses no answer. A body held open that slowly would otherwise keep its place at
   * the cap for ever, at one request per `bodyTimeout`.
   */
  get inBodyOnly(): boolean {
    return !this.closed && this.framing.phase === "body" && this.writingSince === 0 &&
      this.responses.pending === 1 && !this.responses.midAnswer &&
      this.refusalAfterAnswers === undefined;
  }

  /** Waiting for a request head: part of one has come, or nothing at all has been asked yet. */
  get waitingForHead(): boolean {
    return this.handshaking || this.framing.phase === "head" ||
      (!this.forwardedAny && this.framing.phase === "idle");
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const conn of [this.client, this.upstream]) {
      try {
        conn?.close();
      } catch { /* closed already */ }
    }
  }
}

/** TLS clients refused at the cap at once whose handshakes run for a 503; past it, closed. */
const MAX_REFUSING_HANDSHAKES = 64;

/** Connections the front answers and closes without reading from them. */
export class Refusals {
  /** TLS clients refused whose handshake runs so that they can read the answer. */
  #handshaking = 0;

  constructor(private readonly clock: Clock) {}

  refuse(client: ClientConn, response: Uint8Array, handshakeLimitMs: number): void {
    const close = () => {
      try {
        client.close();
      } catch { /* closed already */ }
    };
    if ("handshake" in client) {
      // A TLS client reads an answer only after its handshake: run it, under the head's time
      // limit and for a bounded number of refused clients at once, then answer (not a reset).
      if (this.#handshaking >= MAX_REFUSING_HANDSHAKES) return close();
      this.#handshaking++;
      const timer = this.clock.setTimeout(close, handshakeLimitMs, { unref: true });
      void (client as ClientConn & Pick<Deno.TlsConn, "handshake">).handshake()
        .then(() => writeAll(client, response))
        .catch(() => {})
        .finally(() => {
          timer.clear();
          this.#handshaking--;
          close();
        });
      return;
    }
    // A small answer fits the socket's buffer: a client that never reads cannot hold this.
    void client.write(response).catch(() => {}).finally(close);
  }
}
