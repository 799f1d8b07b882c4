/**
 * One server-side TLS connection on node:tls, shaped as the `Deno.Conn` the TCP front reads
 * and writes (`read` into a buffer, `write` resolving once the bytes are handed to the
 * socket, `close`), plus `handshake()`, which the front awaits and times. Reads are buffered
 * up to a bound, past which the socket is paused: a client cannot fill memory faster than the
 * front passes its bytes on.
 */
import type net from "node:net";
import tls from "node:tls";

/** Bytes read ahead of the front before the socket is paused. */
const READ_AHEAD = 64 * 1024;

export class NodeTlsConn {
  readonly remoteAddr: Deno.NetAddr;
  readonly localAddr: Deno.NetAddr;
  readonly #socket: tls.TLSSocket;
  readonly #raw: net.Socket;
  readonly #chunks: Uint8Array[] = [];
  #queued = 0;
  #ended = false;
  /** The client sent all it will (its side ended); answers may still go out. */
  #readEnded = false;
  #wake?: () => void;
  readonly #secure = Promise.withResolvers<{ alpnProtocol: string | null }>();

  constructor(raw: net.Socket, context: tls.SecureContext, alpn: string[]) {
    this.#raw = raw;
    this.remoteAddr = {
      transport: "tcp",
      hostname: unmapped(raw.remoteAddress ?? ""),
      port: raw.remotePort ?? 0,
    };
    this.localAddr = {
      transport: "tcp",
      hostname: unmapped(raw.localAddress ?? ""),
      port: raw.localPort ?? 0,
    };
    raw.setNoDelay(true);
    raw.on("error", () => this.#end());
    const socket = this.#socket = new tls.TLSSocket(raw, {
      isServer: true,
      secureContext: context,
      ALPNProtocols: alpn,
    });
    // Rejections nobody awaits (a connection closed before the front asked) are not errors.
    this.#secure.promise.catch(() => {});
    socket.on("secure", () => {
      const alpnProtocol = socket.alpnProtocol;
      this.#secure.resolve({
        alpnProtocol: typeof alpnProtocol === "string" ? alpnProtocol : null,
      });
    });
    socket.on("data", (chunk: Uint8Array) => {
      this.#chunks.push(chunk);
      this.#queued += chunk.length;
      if (this.#queued > READ_AHEAD) socket.pause();
      this.#wakeReader();
    });
    socket.on("end", () => {
      this.#readEnded = true;
      this.#wakeReader();
    });
    socket.on("close", () => this.#end());
    socket.on("error", (error: Error) => this.#end(error));
  }

  handshake(): Promise<{ alpnProtocol: string | null }> {
    return this.#secure.promise;
  }

  async read(into: Uint8Array): Promise<number | null> {
    while (this.#chunks.length === 0) {
      if (this.#ended || this.#readEnded) return null;
      await new Promise<void>((resolve) => this.#wake = resolve);
    }
    const chunk = this.#chunks[0];
    const n = Math.min(into.length, chunk.length);
    into.set(chunk.subarray(0, n));
    if (n === chunk.length) this.#chunks.shift();
    else this.#chunks[0] = chunk.subarray(n);
    this.#queued -= n;
    if (this.#queued <= READ_AHEAD / 2 && this.#socket.isPaused()) this.#socket.resume();
    return n;
  }

  /**
   * Resolves once the socket took the bytes (the front reuses its buffer after); rejects when
   * the connection ends first, whether or not the socket ever calls back.
   */
  write(bytes: Uint8Array): Promise<number> {
    if (this.#ended) return Promise.reject(closedError());
    return new Promise((resolve, reject) => {
      this.#writes.add(reject);
      this.#socket.write(bytes, (error?: Error | null) => {
        this.#writes.delete(reject);
        if (error) reject(error);
        else resolve(bytes.length);
      });
    });
  }

  readonly #writes = new Set<(error: Error) => void>();

  close(): void {
    this.#end();
    this.#socket.destroy();
    this.#raw.destroy();
  }

  #end(error?: Error): void {
    if (!this.#ended) {
      this.#ended = true;
      this.#secure.reject(error ?? new Error("the connection closed before its TLS handshake"));
    }
    for (const reject of this.#writes) reject(closedError());
    this.#writes.clear();
    this.#wakeReader();
  }

  #wakeReader(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

function closedError(): Error {
  return new Deno.errors.BrokenPipe("the connection is closed");
}

/** `::ffff:10.0.0.1` as `10.0.0.1`: the address as an IPv4 peer is known elsewhere. */
function unmapped(address: string): string {
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}
