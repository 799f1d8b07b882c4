/**
 * The bench's load generator speaks HTTP/1.1 over one kept-alive socket per worker, reading
 * with `conn.read` into one buffer. `fetch` would cost the client 150–300 µs of CPU per call,
 * and on two shared cores that CPU comes out of what the gateway and backend can use; this
 * costs about 20 µs, so the figures show the servers rather than the load generator.
 */
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export interface Reply {
  status: number;
  headers: Map<string, string>;
  body: string;
}

export class HttpConnection {
  #buffer: Uint8Array;
  #start = 0;
  #end = 0;

  /** CA certificates trusted for https URLs (a scenario's own test CA). */
  static trusted: string[] = [];

  private constructor(
    private readonly conn: Deno.Conn,
    private readonly host: string,
    bufferBytes: number,
  ) {
    this.#buffer = new Uint8Array(bufferBytes);
  }

  /** `bufferBytes` is where reading starts; the buffer grows for larger answers. */
  static async open(url: string, bufferBytes = 64 * 1024): Promise<HttpConnection> {
    const { hostname, port, host, protocol } = new URL(url);
    if (protocol === "https:") {
      const tls = await Deno.connectTls({
        hostname,
        port: Number(port),
        caCerts: HttpConnection.trusted,
      });
      await tls.handshake();
      return new HttpConnection(tls, host, bufferBytes);
    }
    const conn = await Deno.connect({ hostname, port: Number(port) });
    conn.setNoDelay(true);
    return new HttpConnection(conn, host, bufferBytes);
  }

  close(): void {
    try {
      this.conn.close();
    } catch { /* already closed */ }
  }

  /** Sends a request and reads its whole answer (Content-Length or chunked). */
  async request(
    method: string,
    path: string,
    headers: Record<string, string>,
    body = "",
  ): Promise<Reply> {
    const bytes = encoder.encode(body);
    let head = `${method} ${path} HTTP/1.1\r\nhost: ${this.host}\r\n`;
    for (const name in headers) head += `${name}: ${headers[name]}\r\n`;
    if (method !== "GET") head += `content-length: ${bytes.length}\r\n`;
    const headBytes = encoder.encode(head + "\r\n");
    const packet = new Uint8Array(headBytes.length + bytes.length);
    packet.set(headBytes);
    packet.set(bytes, headBytes.length);
    await this.#writeAll(packet);
    return await this.readReply(method !== "HEAD");
  }

  /** Sends a request and returns once the answer's head is in: for held streams. */
  async openStream(path: string, headers: Record<string, string>): Promise<Reply> {
    let head = `GET ${path} HTTP/1.1\r\nhost: ${this.host}\r\n`;
    for (const name in headers) head += `${name}: ${headers[name]}\r\n`;
    await this.#writeAll(encoder.encode(head + "\r\n"));
    return await this.readReply(false);
  }

  /** Reads whatever the server has sent on a held stream (resolves when some bytes arrive). */
  async readSome(): Promise<string> {
    if (this.#end > this.#start) {
      const text = decoder.decode(this.#buffer.subarray(this.#start, this.#end));
      this.#start = this.#end = 0;
      return text;
    }
    const n = await this.conn.read(this.#buffer);
    if (n === null) throw new Error("the server closed the stream");
    return decoder.decode(this.#buffer.subarray(0, n));
  }

  async #writeAll(bytes: Uint8Array): Promise<void> {
    for (let written = 0; written < bytes.length;) {
      written += await this.conn.write(bytes.subarray(written));
    }
  }

  async readReply(withBody: boolean): Promise<Reply> {
    let headEnd: number;
    while ((headEnd = this.#find("\r\n\r\n")) < 0) await this.#fill();
    const lines = decoder.decode(this.#buffer.subarray(this.#start, headEnd)).split("\r\n");
    this.#start = headEnd + 4;
    const status = Number(lines[0].split(" ")[1]);
    const headers = new Map<string, string>();
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(":");
      headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
    }
    if (!withBody || status === 204 || status === 304) return { status, headers, body: "" };
    const length = headers.get("content-length");
    if (length !== undefined) return { status, headers, body: await this.#take(Number(length)) };
    if (headers.get("transfer-encoding")?.includes("chunked")) {
      let body = "";
      for (;;) {
        let lineEnd: number;
        while ((lineEnd = this.#find("\r\n")) < 0) await this.#fill();
        const size = parseInt(decoder.decode(this.#buffer.subarray(this.#start, lineEnd)), 16);
        this.#start = lineEnd + 2;
        const chunk = await this.#take(size + 2);
        if (size === 0) return { status, headers, body };
        body += chunk.slice(0, size);
      }
    }
    throw new Error(`an answer without a length: ${lines[0]}`);
  }

  async #take(length: number): Promise<string> {
    while (this.#end - this.#start < length) await this.#fill();
    const text = decoder.decode(this.#buffer.subarray(this.#start, this.#start + length));
    this.#start += length;
    return text;
  }

  #find(marker: string): number {
    const first = marker.charCodeAt(0);
    outer: for (let i = this.#start; i <= this.#end - marker.length; i++) {
      if (this.#buffer[i] !== first) continue;
      for (let j = 1; j < marker.length; j++) {
        if (this.#buffer[i + j] !== marker.charCodeAt(j)) continue outer;
      }
      return i;
    }
    return -1;
  }

  async #fill(): Promise<void> {
    if (this.#start > 0) {
      this.#buffer.copyWithin(0, this.#start, this.#end);
      this.#end -= this.#start;
      this.#start = 0;
    }
    if (this.#end === this.#buffer.length) {
      const bigger = new Uint8Array(this.#buffer.length * 2);
      bigger.set(this.#buffer);
      this.#buffer = bigger;
    }
    const n = await this.conn.read(this.#buffer.subarray(this.#end));
    if (n === null) throw new Error("the server closed the connection");
    this.#end += n;
  }
}

/** The JSON-RPC message in an answer: the body itself, or the last `data:` of an SSE body. */
export function rpcOf(reply: Reply): Record<string, unknown> | undefined {
  const type = reply.headers.get("content-type") ?? "";
  let text = reply.body;
  if (type.includes("text/event-stream")) {
    const data = text.split("\n").filter((line) => line.startsWith("data: ") && line.length > 6);
    if (!data.length) return undefined;
    text = data[data.length - 1].slice(6);
  }
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
