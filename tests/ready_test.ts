/**
 * `/ready` for load balancers, on a gateway process with a real PostgreSQL stopped and started:
 * 503 with Retry-After while the storage does not answer (while /health stays 200 and says so),
 * 200 again once it answers, with no other traffic to tell the gateway it is back.
 */
import assert from "node:assert/strict";
import { startHttpFixture } from "./fixtures/fixture_server.ts";
import { startGatewayProcess } from "./fixtures/gateway_process.ts";
import { startPostgres } from "./fixtures/postgres.ts";
import { waitUntil } from "./fixtures/waits.ts";

async function probe(url: string) {
  const response = await fetch(url);
  return {
    status: response.status,
    retryAfter: response.headers.get("retry-after"),
    body: await response.json(),
  };
}

Deno.test("/ready answers 503 with Retry-After while PostgreSQL is down and 200 once it is back; /health stays 200", async () => {
  const postgres = await startPostgres();
  const url = await postgres.createDatabase();
  const backend = await startHttpFixture();
  const gateway = await startGatewayProcess(
    `listen: 127.0.0.1:{{PORT}}
storage: ${url.replace(postgres.password, "${PGPASSWORD}")}
storageTimeout: 2s
secret: ready-test-secret-0123456789-abcdef-0123
servers:
  api: { transport: streamable-http, url: "${backend.url}", public: true }
`,
    { PGPASSWORD: postgres.password },
  );
  try {
    assert.deepEqual(await probe(`${gateway.url}/ready`), {
      status: 200,
      retryAfter: null,
      body: { status: "ok", storage: "up" },
    });

    await postgres.stop();
    // The answer of a probe is reused for a second; the next ones ask the storage.
    await waitUntil(
      "/ready to answer 503 with PostgreSQL stopped",
      async () => (await probe(`${gateway.url}/ready`)).status === 503,
      { every: 200 },
    );
    assert.deepEqual(await probe(`${gateway.url}/ready`), {
      status: 503,
      retryAfter: "5",
      body: { status: "unavailable", storage: "down" },
    });
    // /health stays 200 (this replica still serves calls that need no storage) and says why.
    assert.deepEqual(await probe(`${gateway.url}/health`), {
      status: 200,
      retryAfter: null,
      body: { status: "ok", storage: "down" },
    });

    await postgres.start();
    // Nothing else asks the storage meanwhile: /ready itself finds it back.
    await waitUntil(
      "/ready to answer 200 once PostgreSQL is back",
      async () => (await probe(`${gateway.url}/ready`)).status === 200,
      { every: 200 },
    );
    assert.deepEqual((await probe(`${gateway.url}/health`)).body, { status: "ok", storage: "up" });
  } finally {
    await gateway.close();
    await backend.close();
    await postgres.close();
  }
});
