/**
 * HTTPS from certificate files (tls.cert, tls.key), the gateway run as users run it: an MCP
 * call over https by a client that trusts only the test CA; a certificate rotated on disk is
 * served to the next connection while one already open goes on; a key of another certificate
 * is refused by `gatehouse check` (naming the file) and, on rotation, leaves the old one
 * served; a handshake that never comes is cut at connections.headerTimeout; plain HTTP on
 * tls.redirectHttp is answered 308 to https.
 */
import assert from "node:assert/strict";
import { testCa } from "./fixtures/certificates.ts";
import { callOverHttps, httpsGatewayYaml, startHttpsGateway } from "./fixtures/https_gateway.ts";
import { ephemeralPort } from "./fixtures/ports.ts";
import { waitUntil, within } from "./fixtures/waits.ts";

const ROOT = new URL("../", import.meta.url).pathname;

async function setup(extra = "", connections = "{ headerTimeout: 1s }") {
  const [caA, caB] = await Promise.all([testCa("CA A"), testCa("CA B")]);
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-tls-files-" });
  const leafA = await caA.issue("leaf A");
  await Deno.writeTextFile(`${dir}/cert.pem`, leafA.cert);
  await Deno.writeTextFile(`${dir}/key.pem`, leafA.key);
  const redirectPort = ephemeralPort();
  const yaml = httpsGatewayYaml(
    `  cert: ${dir}/cert.pem
  key: ${dir}/key.pem
  redirectHttp: 127.0.0.1:${redirectPort}`,
    `connections: ${connections}
metrics: { listen: "127.0.0.1:{{METRICS_PORT}}" }
${extra}`,
  );
  const cleanup = () =>
    Promise.all([caA.dir, caB.dir, dir].map((d) => Deno.remove(d, { recursive: true })));
  return { caA, caB, dir, yaml, redirectPort, cleanup };
}

/** Whether a TLS connection trusting only `ca` succeeds now. */
async function trusted(port: number, ca: string): Promise<boolean> {
  try {
    const conn = await Deno.connectTls({ hostname: "localhost", port, caCerts: [ca] });
    try {
      await conn.handshake();
      return true;
    } finally {
      conn.close();
    }
  } catch {
    return false;
  }
}

/** GET /health on an open connection; the status. */
async function health(conn: Deno.Conn): Promise<number> {
  await conn.write(new TextEncoder().encode("GET /health HTTP/1.1\r\nhost: localhost\r\n\r\n"));
  const buffer = new Uint8Array(4096);
  let text = "";
  const decoder = new TextDecoder();
  while (!/\r\n\r\n/.test(text) || text.length < headLength(text) + bodyLength(text)) {
    const n = await within("an answer to GET /health", conn.read(buffer));
    if (n === null) throw new Error(`the connection closed mid-answer: ${text}`);
    text += decoder.decode(buffer.subarray(0, n));
  }
  return Number(text.slice(9, 12));
}
const headLength = (text: string) => text.indexOf("\r\n\r\n") + 4;
const bodyLength = (text: string) => Number(/content-length: (\d+)/i.exec(text)?.[1] ?? 0);

Deno.test("over https from files: an MCP call by a client trusting only the CA, ALPN http/1.1, TLS 1.2+", async () => {
  const s = await setup();
  const gw = await startHttpsGateway(s.yaml, s.caA.cert);
  try {
    const answer = await callOverHttps(gw, s.caA.cert);
    assert.equal(answer.status, 200, JSON.stringify(answer));
    assert.ok(answer.body.result, JSON.stringify(answer));
    const conn = await Deno.connectTls({
      hostname: "localhost",
      port: gw.port,
      caCerts: [s.caA.cert],
      alpnProtocols: ["h2", "http/1.1"],
    });
    assert.equal((await conn.handshake()).alpnProtocol, "http/1.1");
    conn.close();
    // `gatehouse health` (the container's health check) speaks TLS to a gateway that does.
    const health = await new Deno.Command("deno", {
      args: [
        "run",
        "-A",
        "--config",
        `${ROOT}deno.json`,
        `${ROOT}main.ts`,
        "health",
        "--config",
        gw.configFile,
      ],
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.equal(health.code, 0, new TextDecoder().decode(health.stderr));
    // A client that does not trust the CA is refused in the handshake.
    assert.equal(await trusted(gw.port, s.caB.cert), false);
    const old = new Deno.Command("openssl", {
      args: ["s_client", "-connect", `127.0.0.1:${gw.port}`, "-tls1_1"],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const tls11 = await within("openssl s_client -tls1_1 to end", old);
    assert.equal(tls11.success, false, "TLS 1.1 is refused");
  } finally {
    await gw.close();
    await s.cleanup();
  }
});

Deno.test("a certificate rotated on disk is served to the next connection; an open one goes on", async () => {
  const s = await setup();
  const gw = await startHttpsGateway(s.yaml, s.caA.cert);
  try {
    const open = await Deno.connectTls({
      hostname: "localhost",
      port: gw.port,
      caCerts: [s.caA.cert],
    });
    assert.equal(await health(open), 200);
    // A key of another certificate: refused, the old pair stays served.
    const stray = await s.caB.issue("stray");
    await Deno.writeTextFile(`${s.dir}/key.pem`, stray.key);
    await waitUntil(
      "the refused rotation to be logged",
      () => gw.logs().includes("the TLS certificate was not reloaded"),
    );
    assert.match(gw.logs(), /key\.pem is not the private key of the certificate in .*cert\.pem/);
    assert.equal(await trusted(gw.port, s.caA.cert), true);
    // The real rotation: certificate first, then its key, as renewal tools write them.
    const leafB = await s.caB.issue("leaf B");
    await Deno.writeTextFile(`${s.dir}/cert.pem`, leafB.cert);
    await Deno.writeTextFile(`${s.dir}/key.pem`, leafB.key);
    await waitUntil(
      "a new connection to get the rotated certificate",
      () => trusted(gw.port, s.caB.cert),
    );
    assert.equal(await trusted(gw.port, s.caA.cert), false);
    // The connection opened before goes on with its own.
    assert.equal(await health(open), 200);
    open.close();
    await waitUntil(
      "the replacement to be logged",
      () => /"msg":"TLS certificate replaced"/.test(gw.logs()),
    );
  } finally {
    await gw.close();
    await s.cleanup();
  }
});

Deno.test("SIGHUP reads the certificate files again when no change was seen (a symlink's target rewritten elsewhere)", async () => {
  const s = await setup();
  // tls.cert and tls.key are symlinks into another directory, which nothing watches.
  const elsewhere = await Deno.makeTempDir({ prefix: "gatehouse-tls-target-" });
  await Deno.rename(`${s.dir}/cert.pem`, `${elsewhere}/cert.pem`);
  await Deno.rename(`${s.dir}/key.pem`, `${elsewhere}/key.pem`);
  await Deno.symlink(`${elsewhere}/cert.pem`, `${s.dir}/cert.pem`);
  await Deno.symlink(`${elsewhere}/key.pem`, `${s.dir}/key.pem`);
  const gw = await startHttpsGateway(s.yaml, s.caA.cert);
  try {
    const leafB = await s.caB.issue("leaf B");
    await Deno.writeTextFile(`${elsewhere}/cert.pem`, leafB.cert);
    await Deno.writeTextFile(`${elsewhere}/key.pem`, leafB.key);
    assert.equal(await trusted(gw.port, s.caA.cert), true, "unseen until SIGHUP");
    gw.signal("SIGHUP");
    await waitUntil(
      "the certificate read again on SIGHUP to be served",
      () => trusted(gw.port, s.caB.cert),
    );
  } finally {
    await gw.close();
    await s.cleanup();
    await Deno.remove(elsewhere, { recursive: true });
  }
});

Deno.test("gatehouse check refuses a key that does not match its certificate, naming the file", async () => {
  const s = await setup();
  try {
    const stray = await s.caB.issue("stray");
    await Deno.writeTextFile(`${s.dir}/key.pem`, stray.key);
    const configFile = `${s.dir}/config.yaml`;
    await Deno.writeTextFile(
      configFile,
      s.yaml.replaceAll("{{PORT}}", "8443").replaceAll("{{METRICS_PORT}}", "9464"),
    );
    const result = await new Deno.Command("deno", {
      args: [
        "run",
        "-A",
        "--config",
        `${ROOT}deno.json`,
        `${ROOT}main.ts`,
        "check",
        "--config",
        configFile,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(result.stderr);
    assert.equal(result.code, 78, stderr);
    assert.match(
      stderr,
      new RegExp(
        `tls: ${s.dir}/key\\.pem is not the private key of the certificate in ${s.dir}/cert\\.pem`,
      ),
    );
  } finally {
    await s.cleanup();
  }
});

Deno.test("a TLS handshake must finish within connections.headerTimeout; plain HTTP on redirectHttp gets 308 to https", async () => {
  const s = await setup();
  const gw = await startHttpsGateway(s.yaml, s.caA.cert);
  try {
    const silent = await Deno.connect({ hostname: "127.0.0.1", port: gw.port });
    const ended = await within(
      "the gateway to close a connection that never began its handshake",
      silent.read(new Uint8Array(16)).catch(() => null),
    );
    assert.equal(ended, null);
    silent.close();
    await waitUntil(
      "the handshake time-out to be logged",
      () => /connection closed by a time limit.*connections\.headerTimeout/.test(gw.logs()),
    );

    const redirected = await fetch(`http://127.0.0.1:${s.redirectPort}/tools/mcp?x=1`, {
      redirect: "manual",
    });
    await redirected.body?.cancel();
    assert.equal(redirected.status, 308);
    assert.equal(redirected.headers.get("location"), `https://localhost:${gw.port}/tools/mcp?x=1`);

    // Plain HTTP to the TLS port: the handshake fails, the connection closes, and it is counted.
    const plain = await Deno.connect({ hostname: "127.0.0.1", port: gw.port });
    await plain.write(new TextEncoder().encode("GET /health HTTP/1.1\r\nhost: x\r\n\r\n"));
    const buffer = new Uint8Array(1024);
    for (;;) {
      const n = await within(
        "the TLS port to close a plain-HTTP connection",
        plain.read(buffer).catch(() => null),
      );
      if (n === null) break;
    }
    plain.close();
    await waitUntil("the failed handshake to be counted", async () => {
      const metrics = await fetch(`http://127.0.0.1:${gw.metricsPort}/metrics`);
      return /gatehouse_tls_handshake_failures_total 1\b/.test(await metrics.text());
    });
  } finally {
    await gw.close();
    await s.cleanup();
  }
});

Deno.test("connections waiting for their TLS handshake count against connections.max and make room for a newcomer", async () => {
  const s = await setup("", "{ max: 2, headerTimeout: 30s }");
  const gw = await startHttpsGateway(s.yaml, s.caA.cert);
  const silent: Deno.Conn[] = [];
  try {
    // The start-up's /health connection closes first (it would be the first to make room).
    await waitUntil("the start-up's connection to be closed", async () => {
      const metrics = await fetch(`http://127.0.0.1:${gw.metricsPort}/metrics`);
      return /gatehouse_connections_open 0\b/.test(await metrics.text());
    });
    // Two connections that never begin a handshake fill the cap…
    for (let i = 0; i < 2; i++) {
      silent.push(await Deno.connect({ hostname: "127.0.0.1", port: gw.port }));
    }
    await waitUntil("the gateway to hold both silent connections", async () => {
      const metrics = await fetch(`http://127.0.0.1:${gw.metricsPort}/metrics`);
      return /gatehouse_connections_open 2\b/.test(await metrics.text());
    });
    // …and a client that does handshake is served: the one waiting longest makes room.
    assert.equal(await trusted(gw.port, s.caA.cert), true);
    const ended = await within(
      "the longest-waiting silent connection to be closed for the newcomer",
      silent[0].read(new Uint8Array(16)).catch(() => null),
    );
    assert.equal(ended, null);
    const metrics = await (await fetch(`http://127.0.0.1:${gw.metricsPort}/metrics`)).text();
    assert.match(metrics, /gatehouse_connections_shed_total\{reason="evicted"\} 1\b/);
  } finally {
    for (const conn of silent) conn.close();
    await gw.close();
    await s.cleanup();
  }
});
