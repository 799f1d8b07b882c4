/**
 * Connections as an attacker or a broken network makes them, against the gateway process as
 * users run it (its TCP front before Deno.serve): clients that dribble their request heads or
 * send nothing are closed at connections.headerTimeout while everyone else is served, and a
 * process that runs out of file descriptors keeps running and serves again once some close.
 */
import assert from "node:assert/strict";
import { startGatewayProcess } from "./fixtures/gateway_process.ts";
import { waitUntil, within } from "./fixtures/waits.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

const SERVERS = `servers:
  mini:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts"]
    public: true
`;

/** Reads until the gateway closes the connection; what it sent first. */
async function firstLine(conn: Deno.Conn): Promise<string> {
  let text = "";
  const buffer = new Uint8Array(1024);
  for (;;) {
    const n = await conn.read(buffer).catch(() => null);
    if (n === null) return text.split("\r\n")[0];
    text += decoder.decode(buffer.subarray(0, n));
  }
}

Deno.test("500 clients dribbling request heads are closed at connections.headerTimeout; others are served meanwhile", async () => {
  // The default headerTimeout (10 s): what a production gateway does, well within 30 s.
  const gw = await startGatewayProcess(`listen: 127.0.0.1:{{PORT}}
storage: ":memory:"
metrics: { token: metrics-token-0123456789 }
${SERVERS}`);
  const slow: Deno.Conn[] = [];
  let dribbling = true;
  try {
    for (let i = 0; i < 500; i++) {
      slow.push(await Deno.connect({ hostname: "127.0.0.1", port: gw.port }));
    }
    const header = encoder.encode("GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ");
    // A byte at a time, every second, for as long as the gateway keeps each connection.
    const dribble = slow.map(async (conn) => {
      for (let at = 0; dribbling && at < header.length; at++) {
        const sent = await conn.write(header.subarray(at, at + 1)).catch(() => 0);
        if (sent === 0) return;
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    });
    const answers = slow.map(firstLine);

    // Meanwhile, somebody else is answered.
    const health = await within(
      "/health while 500 connections dribble",
      fetch(`${gw.url}/health`, { signal: AbortSignal.timeout(30_000) }),
    );
    assert.equal(health.status, 200);
    await health.body?.cancel();

    const lines = await within("every dribbling connection to be closed", Promise.all(answers));
    dribbling = false;
    await Promise.all(dribble);
    const counts = Object.groupBy(lines, (line) => line || "closed");
    assert.equal(
      counts["HTTP/1.1 408 Request Timeout"]?.length,
      500,
      JSON.stringify(Object.keys(counts)),
    );
    const metrics = await fetch(`${gw.url}/metrics`, {
      headers: { authorization: "Bearer metrics-token-0123456789" },
    });
    assert.match(
      await metrics.text(),
      /gatehouse_connection_timeouts_total\{limit="header"\} 500/,
    );
  } finally {
    dribbling = false;
    for (const conn of slow) {
      try {
        conn.close();
      } catch { /* closed by the gateway */ }
    }
    await gw.close();
  }
});

Deno.test("out of file descriptors, the gateway keeps running and serves again once connections close", async () => {
  // Room for the runtime and a few dozen connections; the cap set far above what fits.
  const gw = await startGatewayProcess(
    `listen: 127.0.0.1:{{PORT}}
storage: ":memory:"
connections: { max: 5000 }
${SERVERS}`,
    {},
    { openFileLimit: 128 },
  );
  const held: Deno.Conn[] = [];
  try {
    // Complete requests on kept-alive connections, held open: each costs the gateway three
    // descriptors, so the process runs out long before 200.
    for (let i = 0; i < 200; i++) {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port: gw.port }).catch(() => null);
      if (!conn) break;
      held.push(conn);
      await conn.write(encoder.encode("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")).catch(() => {});
    }
    await waitUntil(
      "the gateway to report running out of file descriptors",
      () => /out of file descriptors|the HTTP server stopped/.test(gw.logs()),
    );
    // Still running…
    const exited = await Promise.race([gw.exited, new Promise((r) => setTimeout(r, 500))]);
    assert.equal(exited, undefined, `the gateway exited:\n${gw.logs().slice(-2000)}`);
    for (const conn of held.splice(0)) conn.close();
    // …and serving again.
    await waitUntil("/health to answer 200 again", async () => {
      const response = await fetch(`${gw.url}/health`, { signal: AbortSignal.timeout(5_000) })
        .catch(() => undefined);
      await response?.body?.cancel();
      return response?.status === 200;
    }, { every: 250 });
    // And it stops as a healthy process does.
    gw.signal("SIGTERM");
    const status = await within("the gateway to stop after SIGTERM", gw.exited);
    assert.equal(status.code, 0, gw.logs().slice(-2000));
  } finally {
    for (const conn of held) conn.close();
    await gw.close();
  }
});
