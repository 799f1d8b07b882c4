/**
 * Scale-out: two gateway processes share one KV file behind a load balancer
 * (tests/fixtures/scale_out_flow.ts, run on PostgreSQL by replicas_postgres_test.ts too), and
 * two in-process gateways share one store: a shared session is stored before its id is handed
 * out, and a session ended on one stays ended on both.
 */
import assert from "node:assert/strict";
import { startHttpFixture } from "./fixtures/fixture_server.ts";
import { startGateway } from "./fixtures/gateway.ts";
import { mcpHeaders, openSession, post } from "./fixtures/raw.ts";
import { sleep, within } from "./fixtures/waits.ts";
import { openKvStore } from "../src/store/kv.ts";
import type { Store } from "../src/store/store.ts";
import { scaleOutFlow } from "./fixtures/scale_out_flow.ts";

Deno.test("two replicas on one KV file: registration, sign-in, tokens, refresh and HTTP sessions carry across", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-scale-" });
  try {
    await scaleOutFlow(t, `${dir}/gatehouse.kv`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a shared session is stored before its id reaches the client, so the next request may land on any replica", async () => {
  const backend = await startHttpFixture();
  const kv = await openKvStore(":memory:");
  // Storage as slow as a remote KV under load: every shared-session write takes 300 ms.
  const slowStore: Store = {
    ...kv,
    get: (key) => kv.get(key),
    getEntry: (key) => kv.getEntry(key),
    commitIfUnchanged: (checks, changes) => kv.commitIfUnchanged(checks, changes),
    setIfAbsent: (key, value) => kv.setIfAbsent(key, value),
    consume: (key) => kv.consume(key),
    consumeAndWrite: (key, writes) => kv.consumeAndWrite(key, writes),
    delete: (key) => kv.delete(key),
    list: (prefix, limit) => kv.list(prefix, limit),
    close: () => kv.close(),
    set: async (key, value, expiresAt) => {
      if (key[0] === "mcp" && key[1] === "session") await sleep(300);
      await kv.set(key, value, expiresAt);
    },
  };
  const yaml = (replica: string) => `
replicaId: ${replica}
servers:
  api: { transport: streamable-http, url: "${backend.url}", public: true }
`;
  const a = await startGateway(yaml("a"), {}, { store: slowStore });
  const b = await startGateway(yaml("b"), {}, { store: slowStore });
  try {
    const session = await openSession(`${a.url}/api/mcp`);
    const call = await post(
      `${b.url}/api/mcp`,
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo_environment" } },
      mcpHeaders({ "mcp-session-id": session }),
    );
    assert.equal(call.status, 200, call.text);
    assert.match(call.text, /streamable-http/);
  } finally {
    await a.close();
    await b.close();
    kv.close();
    await backend.close();
  }
});

Deno.test("a session ended with DELETE stays ended on both replicas: 200 rounds, its old id gets 404 every time", async () => {
  const backend = await startHttpFixture();
  const kv = await openKvStore(":memory:");
  const yaml = (replica: string) => `
replicaId: ${replica}
servers:
  api: { transport: streamable-http, url: "${backend.url}", public: true }
`;
  const a = await startGateway(yaml("a"), {}, { store: kv });
  const b = await startGateway(yaml("b"), {}, { store: kv });
  const replicas = [a, b];
  const list = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/list" });
  try {
    for (let round = 0; round < 200; round++) {
      // Each round a different way through the two replicas: where the session opens, where it
      // is used (a copy there when that is the other one), where it ends, where it is tried again.
      const [opens, uses, ends, retries] = [0, 1, 2, 3].map((bit) => replicas[(round >> bit) & 1]);
      const where = `round ${round}: opened on ${opens === a ? "a" : "b"}, used on ${
        uses === a ? "a" : "b"
      }, ended on ${ends === a ? "a" : "b"}, tried again on ${retries === a ? "a" : "b"}`;
      const session = await openSession(`${opens.url}/api/mcp`);
      const headers = mcpHeaders({ "mcp-session-id": session });
      const used = await post(`${uses.url}/api/mcp`, list(2), headers);
      assert.equal(used.status, 200, `${where}: ${used.text}`);
      const ended = await fetch(`${ends.url}/api/mcp`, { method: "DELETE", headers });
      await ended.body?.cancel();
      assert.equal(ended.status, 204, where);
      const again = await post(`${retries.url}/api/mcp`, list(3), headers);
      assert.equal(again.status, 404, `${where}: ${again.text}`);
      assert.match(again.text, /Session not found/, where);
    }
  } finally {
    await a.close();
    await b.close();
    kv.close();
    await backend.close();
  }
});

Deno.test("a normal DELETE logs no backend error", async () => {
  const backend = await startHttpFixture();
  // The same backend behind a front that refuses DELETE with 405, as the spec allows a server
  // that keeps its sessions: its GET stream stays open until the gateway drops the connection.
  const keeper = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (request) =>
      request.method === "DELETE" ? new Response(null, { status: 405 }) : fetch(backend.url, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        signal: request.signal,
      }),
  );
  const gw = await startGateway(`
servers:
  api: { transport: streamable-http, url: "${backend.url}", public: true }
  keeps: { transport: streamable-http, url: "http://127.0.0.1:${keeper.addr.port}/mcp", public: true }
`);
  try {
    for (const server of ["api", "keeps"]) {
      // notifications/initialized makes the backend connection open its GET stream, which the
      // end of the session then aborts.
      const session = await openSession(`${gw.url}/${server}/mcp`);
      const headers = mcpHeaders({ "mcp-session-id": session });
      const list = { jsonrpc: "2.0", id: 2, method: "tools/list" };
      const used = await post(`${gw.url}/${server}/mcp`, list, headers);
      assert.equal(used.status, 200, used.text);
      const ended = await fetch(`${gw.url}/${server}/mcp`, { method: "DELETE", headers });
      await ended.body?.cancel();
      assert.equal(ended.status, 204);
    }
    // The aborted streams report themselves a moment after the sessions have ended.
    await sleep(300);
    const errors = gw.logs.filter((line) => JSON.parse(line).msg === "backend error");
    assert.deepEqual(errors, []);
  } finally {
    await gw.close();
    await within("the DELETE-refusing front to shut down", keeper.shutdown());
    await backend.close();
  }
});
