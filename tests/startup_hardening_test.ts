/**
 * What the gateway process does to protect what it keeps when it runs outside the shipped
 * systemd unit: the modes of the storage it creates, and the warnings it logs at start-up
 * about a master secret kept in storage and a person's token on a command line.
 */
import assert from "node:assert/strict";
import { startGatewayProcess } from "./fixtures/gateway_process.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const ROOT = new URL("../", import.meta.url).pathname;

const SERVER = `servers:
  alpha:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts"]
    serviceAuths: [{ type: bearer, tokens: ["static-token-0123456789abcdef"] }]
`;

async function modeOf(path: string): Promise<string> {
  return ((await Deno.stat(path)).mode! & 0o777).toString(8);
}

/** The JSON log lines whose msg starts with `prefix`. */
function linesStarting(log: string, prefix: string): Record<string, unknown>[] {
  return log.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line))
    .filter((line) => String(line.msg).startsWith(prefix));
}

Deno.test("with a umask of 022 the storage directory Gatehouse creates is 0700 and its KV files 0600", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-modes-" });
  const storage = `${dir}/data/nested/gatehouse.kv`;
  const gateway = await startGatewayProcess(
    `listen: 127.0.0.1:{{PORT}}\nstorage: ${storage}\n${SERVER}`,
    {},
    { umask: "022" },
  );
  try {
    assert.equal(await modeOf(`${dir}/data`), "700");
    assert.equal(await modeOf(`${dir}/data/nested`), "700");
    // While the gateway runs, SQLite's write-ahead log and shared-memory index exist beside it.
    for (const file of [storage, `${storage}-wal`, `${storage}-shm`]) {
      assert.equal(await modeOf(file), "600", file);
    }
  } finally {
    await gateway.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("existing storage files lose their group and other bits; an existing directory keeps its mode", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-modes-" });
  await Deno.chmod(dir, 0o755);
  const storage = `${dir}/gatehouse.kv`;
  // An empty file is an empty database to SQLite, as one left by an earlier version would be.
  await Deno.writeFile(storage, new Uint8Array());
  await Deno.chmod(storage, 0o644);
  const gateway = await startGatewayProcess(
    `listen: 127.0.0.1:{{PORT}}\nstorage: ${storage}\n${SERVER}`,
    {},
    { umask: "022" },
  );
  try {
    assert.equal(
      await modeOf(dir),
      "755",
      "a directory Gatehouse did not make is not its to change",
    );
    for (const file of [storage, `${storage}-wal`, `${storage}-shm`]) {
      assert.equal(await modeOf(file), "600", file);
    }
  } finally {
    await gateway.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a deployed gateway warns at start-up of a generated secret kept in storage and of {{user.token}} in a stdio server's args", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-warn-" });
  const gateway = await startGatewayProcess(
    `listen: 127.0.0.1:{{PORT}}
baseUrl: https://gatehouse.example.com
storage: ${dir}/gatehouse.kv
servers:
  tracker:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts", "--token={{user.token}}"]
    requiresUserToken: true
oauth:
  idp: { provider: oidc, issuer: "https://login.example.com", clientId: gatehouse, clientSecret: s }
  allow: { domains: [example.com] }
# Behind a proxy that Gatehouse believes, so that the two warnings asked about are the only ones.
trustedProxies: [127.0.0.1]
`,
  );
  try {
    const log = gateway.logs();
    const secret = linesStarting(log, "no secret configured");
    assert.equal(secret.length, 1, log);
    assert.equal(secret[0].level, "warn");
    assert.match(
      String(secret[0].msg),
      /kept in storage beside the data it protects, so whoever can read the storage file/,
    );
    assert.match(
      String(secret[0].msg),
      /set secret: \$\{GATEHOUSE_SECRET\} from an EnvironmentFile/,
    );
    const args = linesStarting(log, "configuration warning");
    assert.equal(args.length, 1, log);
    assert.equal(args[0].level, "warn");
    assert.equal(args[0].path, "servers.tracker.args.2");
    assert.equal(args[0].line, 9);
    assert.equal(args[0].problem, "puts the person's token on the backend's command line");
    assert.equal(
      args[0].hint,
      "pass it in env: instead; args are visible to every local user in ps",
    );
  } finally {
    await gateway.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("on a developer's machine (loopback, plain http) the generated secret is only an info line", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-warn-" });
  const gateway = await startGatewayProcess(
    `listen: 127.0.0.1:{{PORT}}\nstorage: ${dir}/gatehouse.kv\n${SERVER}`,
  );
  try {
    const secret = linesStarting(gateway.logs(), "no secret configured");
    assert.deepEqual(secret.map((line) => line.level), ["info"]);
    assert.deepEqual(linesStarting(gateway.logs(), "configuration warning"), []);
  } finally {
    await gateway.close();
    await Deno.remove(dir, { recursive: true });
  }
});
