/**
 * The public TLS port. Deno's own TLS listener will not do: it takes one certificate for its
 * life, and a connection closed before its handshake keeps its socket open (seen with Deno
 * 2.9.6: a client that never starts a handshake holds a descriptor the front believes it freed).
 * So the port is a node:net server, each connection wrapped in a node:tls server socket made
 * with the certificate current at that moment: a new certificate reaches the next connection,
 * open ones keep theirs, and closing a connection closes its socket, handshake or not.
 * TLS 1.2 and 1.3 only (rustls, under Deno's node:tls, knows no older version); ALPN offers
 * http/1.1, all the server behind speaks.
 *
 * The front (tcp_front.ts) takes these connections as it takes TCP ones: `accept()` hands out
 * a `Deno.Conn` look-alike whose `handshake()` the front runs and times itself.
 */
import net from "node:net";
import tls from "node:tls";
import type { ClientConn } from "../front_connection.ts";
import type { CertifiedKey } from "./certificate.ts";
import { NodeTlsConn } from "./node_tls_conn.ts";

export const ALPN = ["http/1.1"];

export class TlsPort {
  readonly #server: net.Server;
  #context: tls.SecureContext;
  #closed = false;
  readonly #ready: ClientConn[] = [];
  #waiting?: PromiseWithResolvers<ClientConn>;
  /** What is served to new connections now. */
  certificate: CertifiedKey;

  private constructor(server: net.Server, certificate: CertifiedKey) {
    this.#server = server;
    this.certificate = certificate;
    this.#context = contextFor(certificate);
    server.on("connection", (raw: net.Socket) => this.#arrived(raw));
  }

  /** Listens on hostname:port (0: one the kernel picks) with `certificate`. */
  static async listen(hostname: string, port: number, certificate: CertifiedKey): Promise<TlsPort> {
    // Half-open: a client that ends its side after its request still reads the answer (node
    // would otherwise end ours at once); the front closes the connection once it is answered.
    const server = net.createServer({ pauseOnConnect: false, allowHalfOpen: true });
    const tlsPort = new TlsPort(server, certificate);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host: hostname, port }, () => {
        server.off("error", reject);
        resolve();
      });
    });
    // Accept errors after start (out of descriptors, say) are the kernel's to queue; logged by
    // nobody here, as the front logs what it sees.
    server.on("error", () => {});
    return tlsPort;
  }

  get addr(): Deno.NetAddr {
    const address = this.#server.address() as net.AddressInfo;
    return { transport: "tcp", hostname: address.address, port: address.port };
  }

  /** The next client connection, its handshake not yet run. */
  accept(): Promise<ClientConn> {
    const ready = this.#ready.shift();
    if (ready) return Promise.resolve(ready);
    if (this.#closed) return Promise.reject(new Deno.errors.BadResource("the TLS port is closed"));
    this.#waiting ??= Promise.withResolvers<ClientConn>();
    return this.#waiting.promise;
  }

  /** Serves `certificate` to connections from now on; throws (changing nothing) if refused. */
  replace(certificate: CertifiedKey): void {
    this.#context = contextFor(certificate);
    this.certificate = certificate;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#server.close();
    for (const conn of this.#ready.splice(0)) conn.close();
    this.#waiting?.reject(new Deno.errors.BadResource("the TLS port is closed"));
    this.#waiting = undefined;
  }

  #arrived(raw: net.Socket): void {
    if (this.#closed) {
      raw.destroy();
      return;
    }
    let conn: ClientConn;
    try {
      conn = new NodeTlsConn(raw, this.#context, ALPN);
    } catch {
      // An event handler must not throw (it would end the process): drop this one connection.
      raw.destroy();
      return;
    }
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (waiting) waiting.resolve(conn);
    else this.#ready.push(conn);
  }
}

function contextFor(certificate: CertifiedKey): tls.SecureContext {
  return tls.createSecureContext({
    cert: certificate.cert,
    key: certificate.key,
    minVersion: "TLSv1.2",
  });
}
