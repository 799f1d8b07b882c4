import assert from "node:assert/strict";
import { testCa } from "../../../tests/fixtures/certificates.ts";
import { within } from "../../../tests/fixtures/waits.ts";
import { checkCertifiedKey } from "./certificate.ts";
import { TlsPort } from "./tls_port.ts";

async function port() {
  const ca = await testCa();
  const leaf = await ca.issue("port");
  const tlsPort = await TlsPort.listen(
    "127.0.0.1",
    0,
    checkCertifiedKey(leaf.cert, leaf.key, { cert: "cert", key: "key" }),
  );
  return { ca, tlsPort };
}

Deno.test("TlsPort: a write waiting on a client that stopped reading fails when the connection is closed", async () => {
  const { ca, tlsPort } = await port();
  try {
    const client = await Deno.connectTls({
      hostname: "localhost",
      port: tlsPort.addr.port,
      caCerts: [ca.cert],
    });
    const server = await tlsPort.accept() as Deno.Conn & { handshake(): Promise<unknown> };
    await Promise.all([client.handshake(), server.handshake()]);
    // The client reads nothing: sooner or later a write waits for room that never comes.
    const chunk = new Uint8Array(256 * 1024);
    let waiting: Promise<number> | undefined;
    for (let i = 0; i < 400 && !waiting; i++) {
      const write = server.write(chunk);
      const done = await Promise.race([
        write.then(() => true),
        new Promise((r) => setTimeout(r, 50, false)),
      ]);
      if (!done) waiting = write;
    }
    assert.ok(waiting, "some write waited for the client");
    server.close();
    await assert.rejects(within("the waiting write to fail once closed", waiting));
    client.close();
  } finally {
    tlsPort.close();
    await Deno.remove(ca.dir, { recursive: true });
  }
});

Deno.test("TlsPort: a connection closed before its handshake frees its socket; the client sees the end", async () => {
  const { ca, tlsPort } = await port();
  try {
    const client = await Deno.connect({ hostname: "127.0.0.1", port: tlsPort.addr.port });
    const server = await tlsPort.accept();
    server.close();
    const read = await within(
      "the client to see the connection end",
      client.read(new Uint8Array(8)).catch(() => null),
    );
    assert.equal(read, null);
    client.close();
  } finally {
    tlsPort.close();
    await Deno.remove(ca.dir, { recursive: true });
  }
});
