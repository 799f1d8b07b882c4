/**
 * `gatehouse grants` as an operator runs it: a real process on the storage of a gateway
 * process that keeps running, listing who granted what and revoking it; the running gateway
 * refuses the revoked grants' tokens within 10 seconds and ends their sessions.
 */
import assert from "node:assert/strict";
import { RUNTIME_PERMISSIONS } from "../scripts/compile.ts";
import { startGatewayProcess } from "./fixtures/gateway_process.ts";
import { startIdp, type TestIdp } from "./fixtures/idp.ts";
import { exchangeCode, obtainCode, registerClient } from "./fixtures/oauth_raw.ts";
import { startRelay } from "./fixtures/ports.ts";
import { mcpHeaders, openSession, post } from "./fixtures/raw.ts";
import { UserAgent } from "./fixtures/user_agent.ts";
import { waitUntil } from "./fixtures/waits.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const REVOKED = /this grant was revoked: sign in again through your MCP client/;

async function gatehouse(...args: string[]) {
  const output = await new Deno.Command("deno", {
    args: [
      "run",
      ...RUNTIME_PERMISSIONS,
      "--config",
      `${ROOT}deno.json`,
      `${ROOT}main.ts`,
      ...args,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}

/** `email`'s grant to a new client named `name`: the client, its access token, the grant id. */
async function grant(base: string, idp: TestIdp, email: string, name: string) {
  idp.loginAs = { email };
  const client = await registerClient(base, { client_name: name });
  const code = (await obtainCode(new UserAgent(), base, client.client_id, `${base}/alpha`))
    .get("code")!;
  const access = (await exchangeCode(base, client.client_id, code)).json.access_token;
  return { clientId: client.client_id, access };
}

async function call(base: string, access: string, session: string) {
  const answer = await post(
    `${base}/alpha/mcp`,
    { jsonrpc: "2.0", id: 2, method: "tools/list" },
    mcpHeaders({ authorization: `Bearer ${access}`, "mcp-session-id": session }),
  );
  return { status: answer.status, challenge: answer.headers.get("www-authenticate") ?? "" };
}

Deno.test("gatehouse grants list and revoke work on a running gateway's storage, which acts on a revocation within 10 seconds", async (t) => {
  const relay = startRelay();
  const idp = await startIdp([`${relay.url}/oauth/callback`]);
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-grants-" });
  const gw = await startGatewayProcess(`listen: 127.0.0.1:{{PORT}}
baseUrl: ${relay.url}
storage: ${dir}/gatehouse.kv
secret: grants-cli-test-secret-0123456789-abcdefgh
servers:
  alpha: { transport: stdio, command: deno, env: { ${DENO_DIR_YAML} }, args: [run, "${ROOT}tests/fixtures/minimal_server.ts"] }
oauth:
  idp: { provider: oidc, issuer: "${idp.issuer}", clientId: ${idp.clientId}, clientSecret: "${idp.clientSecret}" }
  allow: { domains: [example.com] }
`);
  relay.forwardTo(gw.port);
  const config = gw.configFile;
  try {
    const desktop = await grant(relay.url, idp, "alice@example.com", "Desktop");
    const editor = await grant(relay.url, idp, "alice@example.com", "Editor");
    const bobs = await grant(relay.url, idp, "bob@example.com", "Desktop");
    const session = await openSession(`${relay.url}/alpha/mcp`, {
      authorization: `Bearer ${desktop.access}`,
    });
    const bobSession = await openSession(`${relay.url}/alpha/mcp`, {
      authorization: `Bearer ${bobs.access}`,
    });

    await t.step(
      "list --json shows every live grant with its person, client and servers",
      async () => {
        const listed = await gatehouse("grants", "list", "--json", "--config", config);
        assert.equal(listed.code, 0, listed.stderr);
        const grants = JSON.parse(listed.stdout);
        assert.equal(grants.length, 3);
        const alices = grants.filter((g: { email: string }) => g.email === "alice@example.com");
        assert.deepEqual(alices.map((g: { clientName: string }) => g.clientName).sort(), [
          "Desktop",
          "Editor",
        ]);
        assert.deepEqual(alices[0].servers, ["alpha"]);
        assert.ok(alices.every((g: { grantedAt: string }) => !isNaN(Date.parse(g.grantedAt))));
      },
    );

    await t.step("list --user EMAIL prints a table of that person's grants only", async () => {
      const listed = await gatehouse("grants", "list", "--user", "ALICE@example.com", "-c", config);
      assert.equal(listed.code, 0, listed.stderr);
      const lines = listed.stdout.trim().split("\n");
      assert.match(
        lines[0],
        /^GRANT\s+USER\s+CLIENT\s+SERVERS\s+VIA\s+GRANTED \(UTC\)\s+LAST USED \(UTC\)$/,
      );
      assert.ok(lines.slice(1).every((line) => / browser /.test(line)), "signed in in a browser");
      assert.equal(lines.length, 3);
      assert.ok(lines.slice(1).every((line) => line.includes("alice@example.com")));
      assert.ok(listed.stdout.includes(`Editor (${editor.clientId})`));
      assert.ok(!listed.stdout.includes("bob@"));
    });

    await t.step(
      "revoke --user ends every grant of the person on the running gateway within 10 s; others keep working",
      async () => {
        assert.equal((await call(relay.url, desktop.access, session)).status, 200);
        const revokedAt = performance.now();
        const revoked = await gatehouse(
          "grants",
          "revoke",
          "--user",
          "alice@example.com",
          "--config",
          config,
        );
        assert.equal(revoked.code, 0, revoked.stderr);
        assert.match(
          revoked.stderr,
          /revoked 2 grants: refresh tokens stop now; access tokens and open sessions on every running gateway within 10 seconds/,
        );
        await waitUntil(
          "the running gateway to refuse the revoked grant's token",
          async () => (await call(relay.url, desktop.access, session)).status === 401,
          { ms: 10_000 },
        );
        console.log(
          `gatehouse grants revoke → refused by the running gateway after ${
            (performance.now() - revokedAt).toFixed(0)
          } ms (the command's own start-up included)`,
        );
        assert.match((await call(relay.url, desktop.access, session)).challenge, REVOKED);
        const again = await grant(relay.url, idp, "alice@example.com", "Desktop");
        await waitUntil(
          "the revoked grant's session to end",
          async () => (await call(relay.url, again.access, session)).status === 404,
          { ms: 10_000 },
        );
        assert.equal((await call(relay.url, bobs.access, bobSession)).status, 200);
      },
    );

    await t.step(
      "revoke --grant ID ends one grant; nothing left to revoke is not an error",
      async () => {
        const listed = JSON.parse(
          (await gatehouse(
            "grants",
            "list",
            "--user",
            "bob@example.com",
            "--json",
            "--config",
            config,
          )).stdout,
        );
        assert.equal(listed.length, 1);
        const revoked = await gatehouse(
          "grants",
          "revoke",
          "--grant",
          listed[0].grant,
          "--json",
          "--config",
          config,
        );
        assert.equal(revoked.code, 0, revoked.stderr);
        assert.equal(JSON.parse(revoked.stdout)[0].grant, listed[0].grant);
        const none = await gatehouse(
          "grants",
          "revoke",
          "--client",
          bobs.clientId,
          "--config",
          config,
        );
        assert.equal(none.code, 0);
        assert.match(
          none.stderr,
          new RegExp(`nothing to revoke: no live grant matches --client ${bobs.clientId}`),
        );
      },
    );
  } finally {
    await gw.close();
    await relay.close();
    await idp.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("gatehouse grants says what to do on a bad command line, a configuration without oauth, or missing storage", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-grants-" });
  try {
    const help = await gatehouse("grants", "--help");
    assert.equal(help.code, 0);
    assert.match(
      help.stdout,
      /gatehouse grants revoke \(--user EMAIL\|USER_ID \| --client CLIENT_ID \| --grant GRANT_ID\)/,
    );
    const usage = await gatehouse("grants", "revoke");
    assert.equal(usage.code, 64);
    assert.match(usage.stderr, /revoke needs --user, --client or --grant \(list shows them\)/);
    const plain = `${dir}/plain.yaml`;
    await Deno.writeTextFile(
      plain,
      `storage: ${dir}/x.kv\nservers:\n  a: { transport: streamable-http, url: "http://127.0.0.1:9/mcp", public: true }\n`,
    );
    const noOAuth = await gatehouse("grants", "list", "--config", plain);
    assert.equal(noOAuth.code, 78);
    assert.match(
      noOAuth.stderr,
      /has no oauth: section, so this gateway issues no grants; pass the gateway's configuration with --config/,
    );
    const missing = `${dir}/missing.yaml`;
    await Deno.writeTextFile(
      missing,
      `storage: ${dir}/nowhere/gatehouse.kv
baseUrl: https://gw.example.com
servers:
  a: { transport: streamable-http, url: "http://127.0.0.1:9/mcp" }
oauth:
  idp: { provider: oidc, issuer: "https://login.example.com", clientId: g, clientSecret: s }
  allow: { domains: [example.com] }
`,
    );
    const nowhere = await gatehouse("grants", "list", "--config", missing);
    assert.equal(nowhere.code, 3, nowhere.stderr);
    assert.match(
      nowhere.stderr,
      /cannot open the storage .*nowhere\/gatehouse\.kv: there is no such file; pass the running gateway's configuration with --config/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
