/**
 * One client connection through the TCP front (tcp_front.ts): its request framing, when its
 * current phase began and when it was last active, its two sockets; and the answers the front
 * writes itself when it refuses a connection or a request.
 */
import { type FramingError, RequestFraming } from "./request_framing.ts";

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
