/**
 * The HTTP client the gateway talks to its HTTP backends with: HTTP/1.1 over kept-alive
 * connections (TCP, or TLS for https), shaped as `fetch` so the SDK's client transports use it
 * unchanged. Deno's `fetch` costs 150–300 µs of CPU per request; most of a proxied call's cost
 * was there. This reads and writes the socket directly and builds a `Response` only at the end:
 * an answer with a declared length is read whole (no stream machinery), a chunked or
 * open-ended one (an SSE stream) streams as it arrives.
 *
 * What it does not do, on purpose: follow redirects (the SDK handles them, within the origin),
 * cookies, caches, HTTP/2. Compressed answers are decoded (gzip, deflate) though none is asked for.
 */

const encoder = new TextEncoder();
const latin1 = new TextDecoder("latin1");

export interface Http1ClientOptions {
  /** Idle connections kept per origin for the next request. */
  maxIdlePerOrigin?: number;
  /** An idle connection unused this long is closed. */
  idleTimeoutMs?: number;
  connectTimeoutMs?: number;
  /** Largest response head (status line and headers) accepted. */
  maxHeadBytes?: number;
  /** Answers up to this size with a declared length are read whole before returning. */
  maxInlineBodyBytes?: number;
  userAgent?: string;
  /** URLs this client leaves to Deno's `fetch` (those that go through a proxy). */
  useFetchFor?: (url: URL) => boolean;
}

const DEFAULTS: Required<Http1ClientOptions> = {
  maxIdlePerOrigin: 64,
  idleTimeoutMs: 30_000,
  connectTimeoutMs: 10_000,
  maxHeadBytes: 64 * 1024,
  maxInlineBodyBytes: 1024 * 1024,
  userAgent: "gatehouse",
  useFetchFor: () => false,
};

/** A header name: an RFC 9110 token. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A header value may not break the request's framing. */
const UNSAFE_VALUE = /[\r\n\0]/;

class ConnectionClosedEarly extends Error {}

/** One socket, its read buffer, and whether it may carry another request. */
class Connection {
  buffer: Uint8Array<ArrayBuffer> = new Uint8Array(16 * 1024);
  start = 0;
  end = 0;
  reused = false;
  idleSince = 0;
  broken = false;
  /** The read left waiting while idle: it sees the server closing, or the next answer. */
  #parkedRead?: Promise<number | null>;

  constructor(readonly conn: Deno.Conn, readonly origin: string) {}

  /** Waits until more bytes are in; false at the end of the stream. */
  async fill(limit: number): Promise<boolean> {
    let read = this.#parkedRead;
    this.#parkedRead = undefined;
    if (!read) {
      if (this.start > 0) {
        this.buffer.copyWithin(0, this.start, this.end);
        this.end -= this.start;
        this.start = 0;
      }
      if (this.end === this.buffer.length) {
        if (this.buffer.length >= limit) {
          throw new TypeError("the backend's answer head is too large");
        }
        const bigger = new Uint8Array(Math.min(limit, this.buffer.length * 2));
        bigger.set(this.buffer.subarray(0, this.end));
        this.buffer = bigger;
      }
      read = this.conn.read(this.buffer.subarray(this.end));
    }
    const n = await read;
    if (n === null) return false;
    this.end += n;
    return true;
  }

  /** Leaves a read waiting; returns the promise that settles when the server speaks or leaves. */
  park(): Promise<number | null> {
    this.start = this.end = 0;
    this.idleSince = Date.now();
    const read = this.conn.read(this.buffer).catch(() => null);
    this.#parkedRead = read;
    return read;
  }

  /** Whether the parked read is still the one waiting (nothing arrived while idle). */
  isParked(read: Promise<number | null>): boolean {
    return this.#parkedRead === read;
  }

  close(): void {
    this.broken = true;
    try {
      this.conn.close();
    } catch { /* closed already */ }
  }

  indexOf(byte: number, from: number): number {
    const at = this.buffer.subarray(from, this.end).indexOf(byte);
    return at < 0 ? -1 : from + at;
  }
}

interface Head {
  status: number;
  statusText: string;
  headers: [string, string][];
  length?: number;
  chunked: boolean;
  keepAlive: boolean;
  contentType: string;
  encoding: string;
}

export class Http1Client {
  readonly #options: Required<Http1ClientOptions>;
  readonly #idle = new Map<string, Connection[]>();
  #sweeper?: ReturnType<typeof setInterval>;
  #closed = false;

  constructor(options: Http1ClientOptions = {}) {
    this.#options = { ...DEFAULTS, ...options };
  }

  /** Closes the idle connections; answers still being read finish on theirs. */
  close(): void {
    this.#closed = true;
    clearInterval(this.#sweeper);
    for (const list of this.#idle.values()) for (const connection of list) connection.close();
    this.#idle.clear();
  }

  /** Open idle connections, for tests and metrics. */
  get idleConnections(): number {
    let count = 0;
    for (const list of this.#idle.values()) count += list.length;
    return count;
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
    const request = encodeRequest(method, url, init, this.#options.userAgent);
    // A kept-alive connection the server has just closed fails before any answer arrives; the
    // server never saw the request, so it goes again once on a new connection.
    for (let attempt = 0;; attempt++) {
      const connection = this.#takeIdle(url) ?? await this.#connect(url, signal);
      try {
        return await this.#exchange(connection, method, request, signal);
      } catch (error) {
        connection.close();
        if (error instanceof ConnectionClosedEarly && connection.reused && attempt === 0) continue;
        if (signal?.aborted) throw signal.reason;
        if (error instanceof ConnectionClosedEarly) {
          throw new TypeError(`the backend closed the connection before answering (${url.host})`);
        }
        throw error instanceof TypeError
          ? error
          : new TypeError(describe(error, url), { cause: error });
      }
    }
  };

  async #connect(url: URL, signal: AbortSignal | undefined): Promise<Connection> {
    const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
    const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
    const connecting = url.protocol === "https:"
      ? Deno.connectTls({ hostname, port, alpnProtocols: ["http/1.1"] })
      : Deno.connect({ hostname, port });
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    const stop = new Promise<never>((_, reject) => {
      const fail = (reason: unknown) => {
        // Whatever connects after we gave up is closed at once.
        void connecting.then((conn) => conn.close(), () => {});
        reject(reason);
      };
      timer = setTimeout(
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
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener("abort", onAbort);
    }
  }

  #takeIdle(url: URL): Connection | undefined {
    const list = this.#idle.get(url.origin);
    const connection = list?.pop();
    if (connection) connection.reused = true;
    return connection;
  }

  #release(connection: Connection): void {
    const list = this.#idle.get(connection.origin) ?? [];
    if (this.#closed || connection.broken || list.length >= this.#options.maxIdlePerOrigin) {
      return connection.close();
    }
    list.push(connection);
    this.#idle.set(connection.origin, list);
    const parked = connection.park();
    // Anything arriving on an idle connection (the server closing it, or stray bytes) ends it.
    void parked.then(() => {
      if (!connection.isParked(parked)) return;
      connection.close();
      const at = list.indexOf(connection);
      if (at >= 0) list.splice(at, 1);
    });
    this.#sweeper ??= setInterval(() => this.#sweep(), this.#options.idleTimeoutMs / 2);
    Deno.unrefTimer(this.#sweeper);
  }

  #sweep(): void {
    const oldest = Date.now() - this.#options.idleTimeoutMs;
    for (const [origin, list] of this.#idle) {
      const keep = list.filter((connection) => {
        if (connection.idleSince >= oldest) return true;
        connection.close();
        return false;
      });
      if (keep.length) this.#idle.set(origin, keep);
      else this.#idle.delete(origin);
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
      // A request that could not be written was not processed: safe to send again.
      await writeAll(connection.conn, request).catch((error) => {
        throw connection.reused ? new ConnectionClosedEarly() : error;
      });
      let head = await this.#readHead(connection);
      // 1xx answers are interim; the real one follows.
      while (head.status >= 100 && head.status < 200) head = await this.#readHead(connection);
      const bodyless = method === "HEAD" || head.status === 204 || head.status === 304;
      const init = { status: head.status, statusText: head.statusText, headers: head.headers };
      if (bodyless) {
        this.#finish(connection, head);
        return new Response(null, init);
      }
      // A declared length means the whole answer is ready, SSE or not (a streaming answer is
      // chunked or ends with the connection): read it in one go, no stream machinery.
      if (
        head.length !== undefined && head.length <= this.#options.maxInlineBodyBytes &&
        !head.encoding
      ) {
        const body = await readExactly(connection, head.length);
        this.#finish(connection, head);
        return new Response(body, init);
      }
      streaming = true;
      let body: ReadableStream<Uint8Array<ArrayBuffer>> = this.#bodyStream(
        connection,
        head,
        signal,
        onAbort,
      );
      if (head.encoding) body = decode(body, head.encoding);
      return new Response(body, init);
    } finally {
      if (!streaming) signal?.removeEventListener("abort", onAbort);
    }
  }

  #finish(connection: Connection, head: Head): void {
    if (head.keepAlive && connection.start === connection.end) this.#release(connection);
    else connection.close();
  }

  async #readHead(connection: Connection): Promise<Head> {
    let headEnd: number;
    while ((headEnd = findHeadEnd(connection)) < 0) {
      if (!(await connection.fill(this.#options.maxHeadBytes))) {
        if (connection.end === connection.start) throw new ConnectionClosedEarly();
        throw new TypeError("the backend closed the connection in the middle of its answer");
      }
    }
    const text = latin1.decode(connection.buffer.subarray(connection.start, headEnd));
    connection.start = headEnd;
    return parseHead(text);
  }

  #bodyStream(
    connection: Connection,
    head: Head,
    signal: AbortSignal | undefined,
    onAbort: () => void,
  ): ReadableStream<Uint8Array<ArrayBuffer>> {
    let remaining = head.length ?? Infinity;
    let chunkLeft = 0;
    let done = false;
    const finish = (reusable: boolean) => {
      done = true;
      signal?.removeEventListener("abort", onAbort);
      if (reusable) this.#finish(connection, head);
      else connection.close();
    };
    // Bytes of the body already in the buffer come first; then what the socket brings.
    const take = async (max: number): Promise<Uint8Array<ArrayBuffer> | null> => {
      if (connection.start === connection.end && !(await connection.fill(Infinity))) return null;
      const size = Math.min(max, connection.end - connection.start);
      const bytes = connection.buffer.slice(connection.start, connection.start + size);
      connection.start += size;
      return bytes;
    };
    const nextChunked = async (): Promise<Uint8Array<ArrayBuffer> | null> => {
      while (chunkLeft === 0) {
        const line = await readLine(connection);
        const size = parseInt(line.split(";")[0].trim(), 16);
        if (!Number.isFinite(size) || size < 0 || !/^[0-9a-fA-F]/.test(line)) {
          throw new TypeError("the backend's chunked answer is malformed");
        }
        if (size === 0) {
          // Trailers, if any, end with an empty line.
          while ((await readLine(connection)) !== "");
          return null;
        }
        chunkLeft = size;
      }
      const bytes = await take(chunkLeft);
      if (!bytes) {
        throw new TypeError("the backend closed the connection in the middle of its answer");
      }
      chunkLeft -= bytes.length;
      if (chunkLeft === 0) await readLine(connection);
      return bytes;
    };
    return new ReadableStream<Uint8Array<ArrayBuffer>>({
      pull: async (controller) => {
        try {
          if (head.chunked) {
            const bytes = await nextChunked();
            if (bytes) return controller.enqueue(bytes);
            finish(true);
            return controller.close();
          }
          if (remaining === 0) {
            finish(true);
            return controller.close();
          }
          const bytes = await take(remaining);
          if (!bytes) {
            if (head.length !== undefined) {
              throw new TypeError("the backend's answer was cut short");
            }
            finish(false);
            return controller.close();
          }
          remaining -= bytes.length;
          controller.enqueue(bytes);
          if (remaining === 0) {
            finish(true);
            controller.close();
          }
        } catch (error) {
          finish(false);
          controller.error(signal?.aborted ? signal.reason : error);
        }
      },
      cancel: () => {
        if (!done) finish(false);
      },
    });
  }
}

function encodeRequest(
  method: string,
  url: URL,
  init: RequestInit | undefined,
  userAgent: string,
): Uint8Array {
  if (!TOKEN.test(method)) throw new TypeError(`invalid method ${JSON.stringify(method)}`);
  let head = `${method} ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`;
  let hasUserAgent = false;
  let hasAccept = false;
  const add = (name: string, value: string) => {
    if (!TOKEN.test(name)) throw new TypeError(`invalid header name ${JSON.stringify(name)}`);
    if (UNSAFE_VALUE.test(value)) throw new TypeError(`invalid value for header ${name}`);
    const lower = name.toLowerCase();
    if (lower === "host" || lower === "content-length" || lower === "connection") return;
    if (lower === "transfer-encoding") return;
    if (lower === "user-agent") hasUserAgent = true;
    if (lower === "accept") hasAccept = true;
    head += `${name}: ${value.trim()}\r\n`;
  };
  const headers = init?.headers;
  if (headers instanceof Headers) headers.forEach((value, name) => add(name, value));
  else if (Array.isArray(headers)) { for (const [name, value] of headers) add(name, value); }
  else if (headers) {
    for (const name in headers) add(name, (headers as Record<string, string>)[name]);
  }
  if (!hasUserAgent) head += `user-agent: ${userAgent}\r\n`;
  if (!hasAccept) head += "accept: */*\r\n";
  const raw = init?.body;
  if (typeof raw === "string") {
    // The usual case (a JSON-RPC message): one encode for head and body together.
    return encoder.encode(`${head}content-length: ${utf8Length(raw)}\r\n\r\n${raw}`);
  }
  const body = bodyBytes(raw);
  if (body || method === "POST" || method === "PUT" || method === "PATCH") {
    head += `content-length: ${body?.length ?? 0}\r\n`;
  }
  const headBytes = encoder.encode(head + "\r\n");
  if (!body?.length) return headBytes;
  const packet = new Uint8Array(headBytes.length + body.length);
  packet.set(headBytes);
  packet.set(body, headBytes.length);
  return packet;
}

/** The UTF-8 size of a string, without encoding it. */
function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) bytes += 1;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 2; // a surrogate pair: 2 UTF-16 units, 4 bytes
        i++;
      } else bytes += 2; // a lone surrogate becomes U+FFFD, 3 bytes
    } else bytes += 2;
  }
  return bytes;
}

function bodyBytes(body: BodyInit | null | undefined): Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (body instanceof URLSearchParams) return encoder.encode(body.toString());
  throw new TypeError("this client sends string or byte bodies only");
}

/** Where the head ends (after its empty line: CRLF CRLF, or bare LF LF), or -1. */
function findHeadEnd(connection: Connection): number {
  const { buffer, end } = connection;
  for (
    let lf = connection.indexOf(10, connection.start);
    lf >= 0;
    lf = connection.indexOf(10, lf + 1)
  ) {
    if (buffer[lf + 1] === 10 && lf + 1 < end) return lf + 2;
    if (buffer[lf + 1] === 13 && buffer[lf + 2] === 10 && lf + 2 < end) return lf + 3;
  }
  return -1;
}

function parseHead(text: string): Head {
  const lines = text.split(/\r?\n/);
  const status = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/.exec(lines[0]);
  if (!status) throw new TypeError("the backend did not answer with HTTP/1.x");
  const headers: [string, string][] = [];
  let length: number | undefined;
  let chunked = false;
  let keepAlive = status[1] === "1";
  let contentType = "";
  let encoding = "";
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    if (!line) continue;
    const colon = line.indexOf(":");
    if (colon <= 0 || line[0] === " " || line[0] === "\t") {
      throw new TypeError("the backend's answer has a malformed header");
    }
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    switch (name) {
      case "content-length": {
        const n = Number(value);
        if (!/^\d+$/.test(value) || (length !== undefined && length !== n)) {
          throw new TypeError("the backend's answer has an invalid Content-Length");
        }
        length = n;
        break;
      }
      case "transfer-encoding":
        chunked = value.toLowerCase().split(",").map((s) => s.trim()).includes("chunked");
        break;
      case "connection": {
        const tokens = value.toLowerCase();
        if (tokens.includes("close")) keepAlive = false;
        else if (tokens.includes("keep-alive")) keepAlive = true;
        break;
      }
      case "content-type":
        contentType = value.toLowerCase();
        break;
      case "content-encoding":
        encoding = value.toLowerCase() === "identity" ? "" : value.toLowerCase();
        break;
    }
    headers.push([name, value]);
  }
  // With both, chunked framing wins and the length is ignored (RFC 9112 §6.3).
  if (chunked) length = undefined;
  if (!chunked && length === undefined) keepAlive = false;
  return {
    status: Number(status[2]),
    statusText: status[3] ?? "",
    headers,
    length,
    chunked,
    keepAlive,
    contentType,
    encoding,
  };
}

async function readExactly(
  connection: Connection,
  length: number,
): Promise<Uint8Array<ArrayBuffer>> {
  while (connection.end - connection.start < length) {
    if (!(await connection.fill(Infinity))) {
      throw new TypeError("the backend closed the connection in the middle of its answer");
    }
  }
  const body = connection.buffer.slice(connection.start, connection.start + length);
  connection.start += length;
  return body;
}

async function readLine(connection: Connection): Promise<string> {
  let lf: number;
  while ((lf = connection.indexOf(10, connection.start)) < 0) {
    if (connection.end - connection.start > 8192) {
      throw new TypeError("the backend's chunked answer is malformed");
    }
    if (!(await connection.fill(Infinity))) {
      throw new TypeError("the backend closed the connection in the middle of its answer");
    }
  }
  const line = latin1.decode(connection.buffer.subarray(connection.start, lf)).replace(/\r$/, "");
  connection.start = lf + 1;
  return line;
}

function decode(
  body: ReadableStream<Uint8Array<ArrayBuffer>>,
  encoding: string,
): ReadableStream<Uint8Array<ArrayBuffer>> {
  if (encoding === "gzip" || encoding === "x-gzip") {
    return body.pipeThrough(new DecompressionStream("gzip"));
  }
  if (encoding === "deflate") return body.pipeThrough(new DecompressionStream("deflate"));
  throw new TypeError(`the backend answered with an unsupported Content-Encoding: ${encoding}`);
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let written = 0; written < bytes.length;) {
    written += await conn.write(bytes.subarray(written));
  }
}

function describe(error: unknown, url: URL): string {
  const message = error instanceof Error ? error.message : String(error);
  return `${message} (${url.host})`;
}
