/**
 * HTTPS with certificates from a real ACME server (Debian's pebble), the gateway run as users
 * run it: a certificate obtained through HTTP-01 (really validated, on tls.redirectHttp) serves
 * an MCP call to a client that trusts only pebble's root; a second gateway on the same storage
 * serves the same certificate without asking again; renewal replaces it while a connection
 * opened before goes on; with pebble unreachable at start, a stored certificate is served and
 * the failed attempt is logged and tried again, and without one the gateway keeps trying until
 * pebble answers.
 */
import assert from "node:assert/strict";
import { callOverHttps, httpsGatewayYaml, startHttpsGateway } from "./fixtures/https_gateway.ts";
import { SHARED_ENGINES, type SharedEngine, sharedStorage } from "./fixtures/stores.ts";
import { type Pebble, startPebble } from "./fixtures/pebble.ts";
import { ephemeralPort } from "./fixtures/ports.ts";
import { waitUntil, within } from "./fixtures/waits.ts";

const ROOT = new URL("../", import.meta.url).pathname;

function config(pebble: Pebble, storage: string, redirectPort: number, renewBefore = "30d") {
  return httpsGatewayYaml(
    `  acme:
    directory: ${pebble.directory}
    email: ops@example.com
    caRoots: ${pebble.caRootsFile}
    renewBefore: ${renewBefore}
  redirectHttp: 127.0.0.1:${redirectPort}`,
    `storage: ${storage}
secret: acme-test-secret-0123456789-0123456789-0123456789`,
  );
}

async function setup(engine: SharedEngine = "kv file") {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-acme-" });
  const redirectPort = ephemeralPort();
  const pebble = await startPebble(redirectPort);
  const shared = await sharedStorage(engine);
  return {
    dir,
    redirectPort,
    pebble,
    storage: shared.storage,
    cleanup: async () => {
      await pebble.close();
      await shared.cleanup();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** The serial of the certificate a new connection to `port` gets, lower-case hex. */
async function servedSerial(port: number): Promise<string> {
  const { stdout } = await within(
    "openssl to read the served certificate",
    new Deno.Command("sh", {
      args: [
        "-c",
        `openssl s_client -connect 127.0.0.1:${port} -servername localhost </dev/null 2>/dev/null | openssl x509 -noout -serial`,
      ],
      stdout: "piped",
      stderr: "null",
    }).output(),
  );
  return new TextDecoder().decode(stdout).trim().replace(/^serial=0*/, "").toLowerCase();
}

Deno.test("a certificate obtained through HTTP-01 serves an MCP call to a client trusting only pebble's root; a second gateway on the storage reuses it", async () => {
  const s = await setup();
  try {
    const root = await s.pebble.issuingRoot();
    const first = await startHttpsGateway(config(s.pebble, s.storage, s.redirectPort), root);
    try {
      // Pebble really asked for the challenge on tls.redirectHttp, and issued once.
      assert.match(
        s.pebble.logs(),
        new RegExp(
          `Attempting to validate w/ HTTP: http://localhost:${s.redirectPort}/\\.well-known/acme-challenge/`,
        ),
      );
      assert.equal(s.pebble.issued().length, 1);
      const answer = await callOverHttps(first, root);
      assert.equal(answer.status, 200, JSON.stringify(answer));
      assert.ok(answer.body.result, JSON.stringify(answer));
      assert.equal(await servedSerial(first.port), s.pebble.issued()[0]);
      await waitUntil(
        "the issuance to be logged",
        () => /"msg":"TLS certificate obtained from the ACME directory"/.test(first.logs()),
      );

      const second = await startHttpsGateway(config(s.pebble, s.storage, ephemeralPort()), root);
      try {
        assert.equal(await servedSerial(second.port), s.pebble.issued()[0]);
        assert.equal(s.pebble.issued().length, 1, "the second gateway did not order again");
        await waitUntil(
          "the stored certificate to be logged",
          () => /"msg":"TLS certificate from storage"/.test(second.logs()),
        );
      } finally {
        await second.close();
      }
    } finally {
      await first.close();
    }
  } finally {
    await s.cleanup();
  }
});

for (const engine of SHARED_ENGINES) {
  Deno.test(`two gateways starting together on empty storage (${engine}) order one certificate and both serve it`, async () => {
    const s = await setup(engine);
    try {
      const root = await s.pebble.issuingRoot();
      // Pebble checks challenges on the first one's redirect port only: whichever of the two
      // orders, the answer is in the shared storage, and the first one serves it.
      const [one, two] = await Promise.all([
        startHttpsGateway(config(s.pebble, s.storage, s.redirectPort), root),
        startHttpsGateway(config(s.pebble, s.storage, ephemeralPort()), root),
      ]);
      try {
        assert.equal(s.pebble.issued().length, 1, "one order for both");
        assert.equal(await servedSerial(one.port), s.pebble.issued()[0]);
        assert.equal(await servedSerial(two.port), s.pebble.issued()[0]);
      } finally {
        await Promise.all([one.close(), two.close()]);
      }
    } finally {
      await s.cleanup();
    }
  });
}

Deno.test("renewal replaces the certificate for new connections; a connection opened before goes on", async () => {
  const s = await setup();
  try {
    const root = await s.pebble.issuingRoot();
    // Due at once (pebble's certificates live five years): renewed on the next look (SIGHUP).
    const gw = await startHttpsGateway(config(s.pebble, s.storage, s.redirectPort, "3000d"), root);
    try {
      const before = await servedSerial(gw.port);
      const open = await Deno.connectTls({ hostname: "localhost", port: gw.port, caCerts: [root] });
      const get = async () => {
        await open.write(
          new TextEncoder().encode("GET /health HTTP/1.1\r\nhost: localhost\r\n\r\n"),
        );
        const buffer = new Uint8Array(2048);
        const n = await within("an answer on the connection opened before", open.read(buffer));
        return new TextDecoder().decode(buffer.subarray(0, n ?? 0));
      };
      assert.match(await get(), /^HTTP\/1\.1 200/);
      gw.signal("SIGHUP");
      await waitUntil("pebble to issue the renewal", () => s.pebble.issued().length === 2);
      await waitUntil(
        "new connections to get the renewed certificate",
        async () => (await servedSerial(gw.port)) === s.pebble.issued()[1],
      );
      assert.notEqual(before, s.pebble.issued()[1]);
      assert.match(await get(), /^HTTP\/1\.1 200/);
      open.close();
      await waitUntil(
        "the replacement to be logged",
        () => /"msg":"TLS certificate replaced"/.test(gw.logs()),
      );
    } finally {
      await gw.close();
    }
  } finally {
    await s.cleanup();
  }
});

Deno.test("pebble unreachable at start: a stored certificate is served and the failed renewal retried; without one the gateway keeps trying until pebble answers", async () => {
  const s = await setup();
  try {
    const root = await s.pebble.issuingRoot();
    const yaml = config(s.pebble, s.storage, s.redirectPort, "3000d");
    const first = await startHttpsGateway(yaml, root);
    await first.close();
    await s.pebble.stop();

    // A valid certificate in storage: the gateway starts on it; renewing fails and is retried.
    const stored = await startHttpsGateway(yaml, root);
    try {
      assert.equal(await servedSerial(stored.port), s.pebble.issued()[0]);
      stored.signal("SIGHUP");
      await waitUntil(
        "a failed renewal and its retry to be logged",
        () =>
          /cannot obtain a TLS certificate from the ACME directory; trying again.*"attempt":2/s
            .test(stored.logs()),
      );
    } finally {
      await stored.close();
    }

    // Nothing stored (a storage of its own): no https until pebble answers, tried again meanwhile.
    const fresh = config(s.pebble, `${s.dir}/empty.kv`, s.redirectPort).replace(
      "listen: 127.0.0.1:{{PORT}}",
      `listen: 127.0.0.1:${ephemeralPort()}`,
    );
    const configFile = `${s.dir}/fresh.yaml`;
    await Deno.writeTextFile(configFile, fresh.replaceAll("{{PORT}}", "1"));
    const child = new Deno.Command("deno", {
      args: [
        "run",
        "-A",
        "--config",
        `${ROOT}deno.json`,
        `${ROOT}main.ts`,
        "serve",
        "--config",
        configFile,
      ],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    let log = "";
    const drained = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of child.stderr) log += decoder.decode(chunk, { stream: true });
    })();
    try {
      await waitUntil("two failed attempts to be logged", () => /"attempt":2/.test(log));
      assert.match(log, /cannot obtain a TLS certificate from the ACME directory; trying again/);
      assert.match(log, /"problem":"[^"]*(connect|refused|ECONNREFUSED)/i);
      await s.pebble.start();
      await waitUntil(
        "the gateway to obtain a certificate once pebble answers",
        () => /"msg":"serving https"/.test(log),
        { ms: 60_000 },
      );
    } finally {
      child.kill("SIGTERM");
      await within("the gateway to exit", child.status);
      await drained;
    }
  } finally {
    await s.cleanup();
  }
});
