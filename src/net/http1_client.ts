/**
 * The HTTP client the gateway talks to its HTTP backends with: HTTP/1.1 over kept-alive
 * connections (TCP, or TLS for https), shaped as `fetch` so the SDK's client transports use it
 * unchanged. Deno's `fetch` costs 150–300 µs of CPU per request; most of a proxied call's cost
 * was there. This reads and writes the socket directly and builds a `Response` only at the end:
 * an answer with a declared length is read whole (no stream machinery), a chunked or
 * open-ended one (an SSE stream) streams as it arrives.
 *
 * A request whose reused keep-alive connection ends before a single byte of the answer is sent
 * again, once, on a new connection: an idempotent one (GET, HEAD, PUT, DELETE, OPTIONS), any
 * request none of which was written, and a POST (every MCP call) whose connection ended within
 * QUICK_CLOSE_MS of its writing. That last is the race a kept-alive client meets when the
 * server closed (or was restarted) as the request went out: a backend restarted between two
 * calls gave the next `initialize` a 502. It is what browsers do (RFC 9112 §9.3.1.1 lets a
 * client that knows more retry); a POST that had the backend busy longer, or that failed on a
 * new connection, is never resent, since the backend may have run it. The pool (http1_pool.ts)
 * works to hand out only live connections first.
 *
 * What it does not do, on purpose: follow redirects (the SDK handles them, within the origin),
 * cookies, caches, HTTP/2. Compressed answers are decoded (gzip, deflate) though none is asked
 * for; how large an answer may be is for the caller to bound (mcp/backends/bounded_answers.ts).
 *
 * Modules: http1_wire.ts (request and head encoding), http1_connection.ts (a socket and its
 * reads), http1_body.ts (body streams, decompression), http1_pool.ts (idle connections).
 */
import { type Clock, systemClock, type Timer } from "../core/clock.ts";
import { bodyStream, decode } from "./http1_body.ts";
import { Connection, ConnectionClosedEarly, readExactly, readHead } from "./http1_connection.ts";
import { IdlePool } from "./http1_pool.ts";
import { Http1Response } from "./http1_response.ts";
import { encodeRequest, type Head } from "./http1_wire.ts";
import { withTraceHeaders } from "../observability/tracing.ts";

export interface Http1ClientOptions {
  /** Idle connections kept per origin for the next request. */
  maxIdlePerOrigin?: number;
  /**
   * A connection idle this long is closed and never reused. Below the keep-alive timeouts
   * servers commonly use (2 s for gunicorn, 5 s for Node and uvicorn), so that the server is
   * not closing a connection just as a request is written onto it.
   */
  idleTimeoutMs?: number;
  connectTimeoutMs?: number;
  /** Largest response head (status line and headers) accepted. */
  maxHeadBytes?: number;
  /** Answers up to this size with a declared length are read whole before returning. */
  maxInlineBodyBytes?: number;
  userAgent?: string;
  /** URLs this client leaves to Deno's `fetch` (those that go through a proxy). */
  useFetchFor?: (url: URL) => boolean;
  /** The clock connect and idle times are measured with. */
  clock?: Clock;
}

const DEFAULTS: Required<Http1ClientOptions> = {
  maxIdlePerOrigin: 64,
  idleTimeoutMs: 1_500,
  connectTimeoutMs: 10_000,
  maxHeadBytes: 64 * 1024,
  maxInlineBodyBytes: 1024 * 1024,
  userAgent: "gatehouse",
  useFetchFor: () => false,
  clock: systemClock,
};

/** Why a POST (say) failed without a second try. */
const NOT_RETRIED =
  "the backend closed the connection before answering; the request was not retried because it may have been processed";

/**
 * A POST whose reused connection ended this soon after it was written, without a byte of
 * answer, met a connection the server had closed: sent again once. Later, the backend was
 * working on it (a crash or a timeout of its own), and it is not.
 */
export const QUICK_CLOSE_MS = 1_000;

/** Methods a server must be able to receive twice with the effect of once (RFC 9110 §9.2.2). */
const IDEMPOTENT = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"]);

export class Http1Client {
  readonly #options: Required<Http1ClientOptions>;
  readonly #pool: IdlePool;

  constructor(options: Http1ClientOptions = {}) {
    this.#options = { ...DEFAULTS, ...options };
    this.#pool = new IdlePool(this.#options);
  }

  /** Closes the idle connections; answers still being read finish on theirs. */
  close(): void {
    this.#pool.close();
  }

  /** Open idle connections, for tests and metrics. */
  get idleConnections(): number {
    return this.#pool.size;
  }

  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    if (input instanceof Request) {
      return await this.fetch(input.url, {
        method: input.method,
        headers: input.headers,
        body: input.body ? await input.arrayBuffer() : undefined,
        signal: input.signal,
        ...init,
      });
    }
    const url = typeof input === "string" ? new URL(input) : input;
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new TypeError(`unsupported URL scheme ${url.protocol}`);
    }
    if (this.#options.useFetchFor(url)) return await globalThis.fetch(url, init);
    const signal = init?.signal ?? undefined;
    signal?.throwIfAborted();
    const method = (init?.method ?? "GET").toUpperCase();
    const idempotent = IDEMPOTENT.has(method);
    // Tracing hook: the current span's traceparent header (Deno's fetch, above, adds its own).
    const request = encodeRequest(method, url, withTraceHeaders(init), this.#options.userAgent);
    for (let attempt = 0;; attempt++) {
      // A request that must not go twice gets a connection checked just before it is written.
      const connection = await this.#pool.take(url.origin, !idempotent) ??
        await this.#connect(url, signal);
      if (signal?.aborted) {
        connection.close();
        throw signal.reason;
      }
      const sentAt = this.#options.clock.now();
      try {
        return await this.#exchange(connection, method, request, signal);
      } catch (error) {
        connection.close();
        if (signal?.aborted) throw signal.reason;
        if (!(error instanceof ConnectionClosedEarly)) {
          throw error instanceof TypeError
            ? error
            : new TypeError(describe(error, url), { cause: error });
        }
        // A kept-alive connection the server closed just as the request went out: sent again
        // once on a new connection, if the backend cannot have read it, may read it twice, or
        // closed the connection too soon to have been working on it.
        const quick = this.#options.clock.now() - sentAt < QUICK_CLOSE_MS;
        if (connection.reused && attempt === 0 && (idempotent || !error.written || quick)) {
          continue;
        }
        if (error.written && !idempotent) {
          throw new TypeError(`${NOT_RETRIED} (${url.host})`, { cause: error.cause });
        }
        throw new TypeError(`the backend closed the connection before answering (${url.host})`, {
          cause: error.cause,
        });
      }
    }
  };

  async #connect(url: URL, signal: AbortSignal | undefined): Promise<Connection> {
    const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
    const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
    const connecting = url.protocol === "https:"
      ? Deno.connectTls({ hostname, port, alpnProtocols: ["http/1.1"] })
      : Deno.connect({ hostname, port });
    let timer: Timer | undefined;
    let onAbort: (() => void) | undefined;
    const stop = new Promise<never>((_, reject) => {
      const fail = (reason: unknown) => {
        // Whatever connects after we gave up is closed at once.
        void connecting.then((conn) => conn.close(), () => {});
        reject(reason);
      };
      timer = this.#options.clock.setTimeout(
        () => fail(new TypeError(`connecting to ${url.host} timed out`)),
        this.#options.connectTimeoutMs,
      );
      onAbort = () => fail(signal!.reason);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
    try {
      const conn = await Promise.race([connecting, stop]);
      if ("setNoDelay" in conn) (conn as Deno.TcpConn).setNoDelay(true);
      return new Connection(conn, url.origin);
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      throw error instanceof TypeError
        ? error
        : new TypeError(describe(error, url), { cause: error });
    } finally {
      timer?.clear();
      if (onAbort) signal?.removeEventListener("abort", onAbort);
    }
  }

  async #exchange(
    connection: Connection,
    method: string,
    request: Uint8Array,
    signal: AbortSignal | undefined,
  ): Promise<Response> {
    const onAbort = () => connection.close();
    signal?.addEventListener("abort", onAbort, { once: true });
    let streaming = false;
    try {
      await writeRequest(connection, request);
      let head = await readHead(connection, this.#options.maxHeadBytes, true);
      // 1xx answers are interim; the real one follows.
      while (head.status >= 100 && head.status < 200) {
        head = await readHead(connection, this.#options.maxHeadBytes, false);
      }
      const bodyless = method === "HEAD" || head.status === 204 || head.status === 304;
      if (bodyless) {
        this.#finish(connection, head);
        return answer(null, head);
      }
      // A declared length means the whole answer is ready, SSE or not (a streaming answer is
      // chunked or ends with the connection): read it in one go, no stream machinery.
      if (
        head.length !== undefined && head.length <= this.#options.maxInlineBodyBytes &&
        !head.encoding
      ) {
        const body = await readExactly(connection, head.length);
        this.#finish(connection, head);
        return answer(body, head);
      }
      streaming = true;
      let body = bodyStream(connection, head, (reusable) => {
        signal?.removeEventListener("abort", onAbort);
        if (reusable) this.#finish(connection, head);
        else connection.close();
      }, () => signal?.aborted ? signal.reason : undefined);
      if (head.encoding) body = decode(body, head.encoding);
      return answer(body, head);
    } finally {
      if (!streaming) signal?.removeEventListener("abort", onAbort);
    }
  }

  #finish(connection: Connection, head: Head): void {
    if (head.keepAlive && connection.start === connection.end) this.#pool.release(connection);
    else connection.close();
  }
}

/**
 * Writes the whole request. On a reused connection a failed write is `ConnectionClosedEarly`,
 * saying whether any of it went out: a write that failed before the first byte was accepted
 * sent nothing.
 */
async function writeRequest(connection: Connection, bytes: Uint8Array): Promise<void> {
  let written = 0;
  try {
    while (written < bytes.length) written += await connection.conn.write(bytes.subarray(written));
  } catch (error) {
    if (!connection.reused) throw error;
    throw new ConnectionClosedEarly(written > 0, { cause: error });
  }
}

/** The answer as a `Response`, its `Headers` made only if read (http1_response.ts). */
function answer(
  body: Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> | null,
  head: Head,
): Response {
  return new Http1Response(body, head.status, head.statusText, head.headers);
}

function describe(error: unknown, url: URL): string {
  const message = error instanceof Error ? error.message : String(error);
  return `${message} (${url.host})`;
}
