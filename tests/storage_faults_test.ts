/**
 * PostgreSQL stopped and started again under traffic, a real one and a gateway process on it:
 * calls that need no storage (an MCP call with a token already issued) keep working; those that
 * need it (a refresh, a registration) get 503 with Retry-After; /health says storage is down; the
 * log says so at most once a second and says when it is back; the pool reconnects by itself and
 * nothing written before the restart is lost.
 */
import assert from "node:assert/strict";
import { startBalancer } from "./fixtures/balancer.ts";
import { startHttpFixture } from "./fixtures/fixture_server.ts";
import { startGatewayProcess } from "./fixtures/gateway_process.ts";
import { startIdp } from "./fixtures/idp.ts";
import { connectWithOAuth, MemoryOAuthProvider } from "./fixtures/oauth_client.ts";
import { registerClient, token } from "./fixtures/oauth_raw.ts";
import { startPostgres } from "./fixtures/postgres.ts";
import { UserAgent } from "./fixtures/user_agent.ts";
import { sleep, waitUntil } from "./fixtures/waits.ts";

const METRICS_TOKEN = "storage-faults-metrics-token-0123456789";

/** A family's value in the exposition, e.g. gatehouse_storage_up or errors of one operation. */
async function metric(base: string, series: string): Promise<number> {
  const response = await fetch(`${base}/metrics`, {
    headers: { authorization: `Bearer ${METRICS_TOKEN}` },
  });
  const text = await response.text();
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  if (!line) throw new Error(`no ${series} in /metrics:\n${text.slice(0, 2_000)}`);
  return Number(line.split(" ")[1]);
}

Deno.test("PostgreSQL restarted under traffic: calls without storage go on, the rest get 503 with Retry-After, and all is back after", async () => {
  const postgres = await startPostgres();
  const url = await postgres.createDatabase();
  const lb = startBalancer();
  const idp = await startIdp([`${lb.url}/oauth/callback`]);
  const backend = await startHttpFixture();
  const gateway = await startGatewayProcess(
    `listen: 127.0.0.1:{{PORT}}
baseUrl: ${lb.url}
storage: ${url.replace(postgres.password, "${PGPASSWORD}")}
storageTimeout: 2s
secret: storage-faults-test-secret-0123456789-abcdef
metrics: { token: ${METRICS_TOKEN} }
servers:
  api: { transport: streamable-http, url: "${backend.url}" }
oauth:
  idp: { provider: oidc, issuer: "${idp.issuer}", clientId: ${idp.clientId}, clientSecret: "${idp.clientSecret}" }
  allow: { domains: [example.com] }
`,
    { PGPASSWORD: postgres.password },
  );
  lb.replicas.a = gateway.url;
  lb.route("a");
  const provider = new MemoryOAuthProvider();
  const { client } = await connectWithOAuth(new UserAgent(), `${lb.url}/api/mcp`, provider);
  const health = async () => (await (await fetch(`${lb.url}/health`)).json()).storage;
  try {
    const registered = await registerClient(lb.url);
    const tokens = provider.savedTokens!;
    const clientId = provider.clientInfo!.client_id;
    const refresh = () =>
      token(lb.url, {
        grant_type: "refresh_token",
        refresh_token: tokens.refresh_token!,
        client_id: clientId,
      });
    assert.equal(await health(), "up");

    await postgres.stop();
    const downAt = performance.now();
    // Calls that need no storage: the token is checked in memory, the session is this replica's.
    for (let i = 0; i < 3; i++) {
      const echoed = await client.callTool({ name: "echo_environment", arguments: {} });
      assert.ok(!echoed.isError, JSON.stringify(echoed));
    }
    // Calls that need it: 503 with Retry-After, for as long as it is down (2.5 s of them here).
    let refused = 0;
    while (performance.now() - downAt < 2_500) {
      const refreshed = await refresh();
      assert.equal(refreshed.status, 503, JSON.stringify(refreshed.json));
      assert.equal(refreshed.json.error, "temporarily_unavailable");
      assert.equal(refreshed.headers.get("retry-after"), "5");
      refused++;
      await sleep(50);
    }
    const registration = await fetch(`${lb.url}/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        redirect_uris: ["http://127.0.0.1:9/cb"],
        token_endpoint_auth_method: "none",
      }),
    });
    assert.equal(registration.status, 503, await registration.text());
    assert.equal(registration.headers.get("retry-after"), "5");
    assert.equal(await health(), "down");
    assert.equal(await metric(lb.url, "gatehouse_storage_up"), 0);
    assert.ok(
      await metric(lb.url, 'gatehouse_storage_errors_total{operation="getEntry"}') +
          await metric(lb.url, 'gatehouse_storage_errors_total{operation="consumeAndWrite"}') +
          await metric(lb.url, 'gatehouse_storage_errors_total{operation="get"}') > 0,
      "the failed operations are counted",
    );
    const downFor = (performance.now() - downAt) / 1_000;
    const said = gateway.logs().split("\n").filter((line) => line.includes("storage unreachable"));
    assert.ok(said.length >= 1, gateway.logs());
    assert.ok(
      said.length <= Math.ceil(downFor) + 1,
      `${said.length} log lines for ${refused} refusals in ${
        downFor.toFixed(1)
      } s: at most one a second`,
    );
    assert.ok(!gateway.logs().includes(postgres.password), "the password is in no log line");

    await postgres.start();
    // The pool reconnects by itself: the same refresh goes through once the database is back.
    let rotated: Awaited<ReturnType<typeof refresh>> | undefined;
    await waitUntil("a refresh to succeed once PostgreSQL is back", async () => {
      rotated = await refresh();
      return rotated.status === 200;
    }, { every: 200 });
    assert.ok(rotated!.json.access_token);
    assert.equal(await health(), "up");
    assert.equal(await metric(lb.url, "gatehouse_storage_up"), 1);
    assert.ok(await metric(lb.url, 'gatehouse_storage_seconds_total{operation="get"}') > 0);
    // The line is written when the storage answers again; the process's output reaches the
    // test a moment later.
    await waitUntil(
      "the log to say storage is reachable again",
      () => /storage reachable again/.test(gateway.logs()),
    );
    // Written before the restart, still there: the client registered, the grant refreshed.
    const known = await fetch(`${lb.url}/clients/${registered.client_id}`);
    assert.equal(known.status, 200);
    await known.body?.cancel();
    const again = await token(lb.url, {
      grant_type: "refresh_token",
      refresh_token: rotated!.json.refresh_token,
      client_id: clientId,
    });
    assert.equal(again.status, 200, JSON.stringify(again.json));
  } finally {
    await client.close().catch(() => {});
    await gateway.close();
    await lb.close();
    await backend.close();
    await idp.close();
    await postgres.close();
  }
});
