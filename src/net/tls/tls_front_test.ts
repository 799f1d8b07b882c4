import assert from "node:assert/strict";
import { testCa } from "../../../tests/fixtures/certificates.ts";
import { waitUntil, within } from "../../../tests/fixtures/waits.ts";
import { createLogger } from "../../observability/logger.ts";
import { type FrontEvents, TcpFront } from "../tcp_front.ts";
import { checkCertifiedKey } from "./certificate.ts";
import { TlsPort } from "./tls_port.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * A TcpFront over TLS (a test CA's leaf for localhost) in front of a unix-socket server that
 * holds every request until `release` and then answers `answer`.
 */
async function slowTlsFront(answer: string, maxConnections: number, events?: FrontEvents) {
  const ca = await testCa();
  const leaf = await ca.issue("localhost");
  const dir = await Deno.makeTempDir();
  const release = Promise.withResolvers<void>();
  let received = 0;
  const listening = Promise.withResolvers<void>();
  const server = Deno.serve(
    { transport: "unix", path: `${dir}/s.sock`, onListen: () => listening.resolve() },
    async () => {
      received++;
      await release.promise;
      return new Response(answer);
    },
  );
  await listening.promise;
  const port = await TlsPort.listen(
    "127.0.0.1",
    0,
    checkCertifiedKey(leaf.cert, leaf.key, { cert: "cert", key: "key" }),
  );
  const front = TcpFront.listen({
    hostname: "127.0.0.1",
    port: 0,
    upstream: `${dir}/s.sock`,
    listener: port,
    limits: {
      maxConnections,
      headerTimeoutMs: 10_000,
      bodyTimeoutMs: 10_000,
      idleTimeoutMs: 60_000,
      sendTimeoutMs: 60_000,
    },
    logger: createLogger("error", () => {}),
    ...(events ? { events } : {}),
  });
  return {
    release,
    received: () => received,
    connect: () =>
      Deno.connectTls({ hostname: "localhost", port: port.addr.port, caCerts: [ca.cert] }),
    async close() {
      release.resolve();
      await front.stopAccepting();
      front.closeAll();
      await within("the unix server to shut down", server.shutdown());
      await Deno.remove(dir, { recursive: true });
      await Deno.remove(ca.dir, { recursive: true });
    },
  };
}

/** Everything the connection reads until the other side closes it. */
async function readToEnd(conn: Deno.Conn, what: string): Promise<string> {
  let text = "";
  const buffer = new Uint8Array(4096);
  for (;;) {
    const n = await within(what, conn.read(buffer).catch(() => null));
    if (n === null) return text;
    text += decoder.decode(buffer.subarray(0, n));
  }
}

function closeQuietly(conn: Deno.Conn) {
  try {
    conn.close();
  } catch { /* closed by the front */ }
}

Deno.test("TcpFront over TLS: a newcomer refused at the cap reads a 503 after its handshake, not a reset", async () => {
  const shed: string[] = [];
  const tls = await slowTlsFront("ok", 1, { shed: (reason) => shed.push(reason) });
  const held: Deno.Conn[] = [];
  try {
    // The one place goes to a request whose answer is owed: nothing can make room.
    const busy = await tls.connect();
    held.push(busy);
    await busy.write(encoder.encode("GET /slow HTTP/1.1\r\nHost: localhost\r\n\r\n"));
    await waitUntil(
      "the busy connection's request to reach the server",
      () => tls.received() === 1,
    );
    const refused = await tls.connect();
    held.push(refused);
    await within("the refused client's handshake", refused.handshake());
    const text = await readToEnd(refused, "the 503");
    assert.match(text, /^HTTP\/1\.1 503 Service Unavailable\r\n/);
    assert.match(text, /connections\.max/);
    assert.deepEqual(shed, ["connection_limit"]);
  } finally {
    tls.release.resolve();
    held.forEach(closeQuietly);
    await tls.close();
  }
});

Deno.test("TcpFront over TLS: a client that half-closes after its request still reads the answer", async () => {
  const tls = await slowTlsFront("late answer", 4);
  const conn = await tls.connect();
  try {
    await conn.write(encoder.encode("GET /slow HTTP/1.1\r\nHost: localhost\r\n\r\n"));
    await waitUntil("the request to reach the server", () => tls.received() === 1);
    await conn.closeWrite();
    // Give the half-close time to cross the front before the server answers.
    await new Promise((resolve) => setTimeout(resolve, 100));
    tls.release.resolve();
    const text = await readToEnd(conn, "the answer");
    assert.match(text, /^HTTP\/1\.1 200 OK/);
    assert.match(text, /late answer$/);
  } finally {
    tls.release.resolve();
    closeQuietly(conn);
    await tls.close();
  }
});
