/**
 * SIGHUP reloads config.yaml: sessions of unchanged servers continue, sessions of changed or
 * removed servers end, new servers appear; a bad file changes nothing and every error is logged.
 */
import assert from "node:assert/strict";
import { startGatewayProcess } from "./fixtures/gateway_process.ts";
import { INIT, mcpHeaders, openSession, post } from "./fixtures/raw.ts";
import { waitUntil } from "./fixtures/waits.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const ROOT = new URL("../", import.meta.url).pathname;

function config(servers: Record<string, string>): string {
  return `listen: 127.0.0.1:{{PORT}}
storage: ":memory:"
servers:
${
    Object.entries(servers).map(([name, args]) =>
      `  ${name}:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts"${args}]
    public: true
`
    ).join("")
  }`;
}

async function waitForLog(logs: () => string, pattern: RegExp, from: number): Promise<void> {
  await waitUntil(`a log line matching ${pattern}`, () => pattern.test(logs().slice(from)))
    .catch((error) => {
      throw new Error(`${error.message}; the log since:\n${logs().slice(from)}`);
    });
}

async function call(url: string, session: string) {
  return await post(
    url,
    { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: {} } },
    mcpHeaders({ "mcp-session-id": session }),
  );
}

Deno.test("SIGHUP: unchanged servers keep their sessions, changed ones end, a bad file changes nothing", async () => {
  const gw = await startGatewayProcess(config({ kept: "", changed: "" }));
  try {
    const kept = await openSession(`${gw.url}/kept/mcp`);
    const changed = await openSession(`${gw.url}/changed/mcp`);
    assert.equal((await call(`${gw.url}/kept/mcp`, kept)).status, 200);

    // "changed" gets another argument, "added" appears.
    const port = new URL(gw.url).port;
    await Deno.writeTextFile(
      gw.configFile,
      config({ kept: "", changed: ', "3"', added: "" }).replaceAll("{{PORT}}", port),
    );
    let mark = gw.logs().length;
    gw.signal("SIGHUP");
    await waitForLog(gw.logs, /"msg":"configuration reloaded"/, mark);
    assert.equal((await call(`${gw.url}/kept/mcp`, kept)).status, 200);
    assert.equal((await call(`${gw.url}/changed/mcp`, changed)).status, 404);
    assert.equal((await post(`${gw.url}/added/mcp`, INIT)).status, 200);

    // A broken file: every error logged with its line, the running configuration stays.
    await Deno.writeTextFile(
      gw.configFile,
      `listen: 127.0.0.1:${port}\nlimits: { requestTimeout: soon }\nservers:\n  bad: { transport: pigeon }\n`,
    );
    mark = gw.logs().length;
    gw.signal("SIGHUP");
    await waitForLog(gw.logs, /"msg":"keeping the running configuration"/, mark);
    const refused = gw.logs().slice(mark);
    assert.match(
      refused,
      /"msg":"configuration reload refused".*"line":2.*"path":"limits.requestTimeout"/,
    );
    assert.match(
      refused,
      /"path":"servers.bad.transport".*"problem":"unknown transport \\"pigeon\\""/,
    );
    assert.equal((await call(`${gw.url}/kept/mcp`, kept)).status, 200);
    assert.equal((await post(`${gw.url}/added/mcp`, INIT)).status, 200);
  } finally {
    await gw.close();
  }
});

Deno.test("SIGHUP: a changed admin.listen is said to take a restart, and the console stays where it listens", async () => {
  const consoleConfig = (listen: string) =>
    `listen: 127.0.0.1:{{PORT}}
baseUrl: http://127.0.0.1:{{PORT}}
storage: ":memory:"
trustedProxies: [127.0.0.1]
servers:
  kept: { transport: stdio, command: deno, env: { ${DENO_DIR_YAML} }, args: [run, "${ROOT}tests/fixtures/minimal_server.ts"] }
oauth:
  idp: { provider: oidc, issuer: "https://login.example.com", clientId: gatehouse, clientSecret: s }
  allow: { domains: [example.com] }
admin:
  emails: [ops@example.com]
  listen: ${listen}
  url: http://${listen}
`;
  const gw = await startGatewayProcess(consoleConfig("127.0.0.1:{{METRICS_PORT}}"));
  try {
    const consoleUrl = /listen: (\S+)/.exec(
      (await Deno.readTextFile(gw.configFile)).split("admin:")[1],
    )![1];
    const before = await fetch(`http://${consoleUrl}/admin`, { redirect: "manual" });
    await before.body?.cancel();
    assert.notEqual(before.status, 404, "the console answers on admin.listen");

    const port = new URL(gw.url).port;
    const elsewhere = `127.0.0.1:${Number(consoleUrl.split(":")[1]) + 1}`;
    await Deno.writeTextFile(
      gw.configFile,
      consoleConfig(elsewhere).replaceAll("{{PORT}}", port),
    );
    const mark = gw.logs().length;
    gw.signal("SIGHUP");
    await waitForLog(gw.logs, /"msg":"configuration reloaded"/, mark);
    assert.match(
      gw.logs().slice(mark),
      /change only on restart.*"fixed":\["admin.listen","admin.url"\]/,
    );
    const after = await fetch(`http://${consoleUrl}/admin`, { redirect: "manual" });
    await after.body?.cancel();
    assert.equal(after.status, before.status, "the console still answers where it listens");
  } finally {
    await gw.close();
  }
});
