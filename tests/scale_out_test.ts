/**
 * Scale-out: two gateway processes share one KV file behind a load balancer (a small proxy in
 * this test that sends each request to the replica the test chooses, round robin by default).
 * A client registered on one is known to the other, a sign-in started on one completes on the
 * other, tokens from one work on the other, a refresh on one rotates for both, and a session to
 * a Streamable HTTP backend continues on whichever replica its requests land.
 */
import assert from "node:assert/strict";
import { startHttpFixture } from "./fixtures/fixture_server.ts";
import { type GatewayProcess, startGatewayProcess } from "./fixtures/gateway_process.ts";
import { startIdp } from "./fixtures/idp.ts";
import { connectWithOAuth, MemoryOAuthProvider } from "./fixtures/oauth_client.ts";
import { registerClient, token } from "./fixtures/oauth_raw.ts";
import { startGateway } from "./fixtures/gateway.ts";
import { INIT, mcpHeaders, openSession, post } from "./fixtures/raw.ts";
import { sleep, within } from "./fixtures/waits.ts";
import { openKvStore } from "../src/store/kv.ts";
import type { Store } from "../src/store/store.ts";
import { UserAgent } from "./fixtures/user_agent.ts";

const ROOT = new URL("../", import.meta.url).pathname;

type Replica = "a" | "b";

/** The load balancer: forwards each request to a replica and notes which served what. */
function startBalancer() {
  const replicas: Partial<Record<Replica, string>> = {};
  const served: { method: string; path: string; replica: Replica }[] = [];
  let mode: Replica | "alternate" = "alternate";
  let next: Replica = "a";
  const choose = (): Replica => {
    if (mode !== "alternate") return mode;
    const chosen = next;
    next = next === "a" ? "b" : "a";
    return chosen;
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    const replica = choose();
    const url = new URL(request.url);
    const target = new URL(`${url.pathname}${url.search}`, replicas[replica]!);
    const headers = new Headers(request.headers);
    headers.delete("host");
    served.push({ method: request.method, path: url.pathname, replica });
    const response = await fetch(target, {
      method: request.method,
      headers,
      body: request.body ? await request.arrayBuffer() : undefined,
      redirect: "manual",
    });
    return new Response(response.body, { status: response.status, headers: response.headers });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    served,
    /** Where each replica listens (known once they have started behind the balancer's URL). */
    replicas,
    /** Sends every request to one replica, or alternates between them. */
    route(to: Replica | "alternate") {
      mode = to;
    },
    close: () => within("the load balancer to shut down", server.shutdown()),
  };
}

Deno.test("two replicas on one KV file: registration, sign-in, tokens, refresh and HTTP sessions carry across", async (t) => {
  const lb = startBalancer();
  const lbUrl = lb.url;
  const idp = await startIdp([`${lbUrl}/oauth/callback`]);
  const backend = await startHttpFixture();
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-scale-" });
  const yaml = `listen: 127.0.0.1:{{PORT}}
baseUrl: ${lbUrl}
storage: ${dir}/gatehouse.kv
secret: scale-out-test-secret-0123456789-abcdefgh
replicaId: \${REPLICA}
servers:
  api: { transport: streamable-http, url: "${backend.url}" }
  local:
    transport: stdio
    command: deno
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts"]
    env: { PATH: "${Deno.env.get("PATH")}" }
oauth:
  idp: { provider: oidc, issuer: "${idp.issuer}", clientId: ${idp.clientId}, clientSecret: "${idp.clientSecret}" }
  allow: { domains: [example.com] }
`;
  const replicas: Record<Replica, GatewayProcess> = {
    a: await startGatewayProcess(yaml, { REPLICA: "a" }),
    b: await startGatewayProcess(yaml, { REPLICA: "b" }),
  };
  const clients: { close(): Promise<void> }[] = [];
  lb.replicas.a = replicas.a.url;
  lb.replicas.b = replicas.b.url;
  const servedBy = (method: string, path: string) =>
    lb.served.filter((r) => r.method === method && r.path === path).map((r) => r.replica);
  try {
    await t.step("a client registered on one replica is known to the other", async () => {
      lb.route("a");
      const registered = await registerClient(lb.url);
      lb.route("b");
      const read = await fetch(`${lb.url}/clients/${registered.client_id}`);
      assert.equal(read.status, 200);
      assert.equal((await read.json()).client_id, registered.client_id);
    });

    const agent = new UserAgent();
    const provider = new MemoryOAuthProvider();
    let client: Awaited<ReturnType<typeof connectWithOAuth>>["client"];
    await t.step("sign-in, consent and tokens hop between replicas and work", async () => {
      lb.route("alternate");
      ({ client } = await connectWithOAuth(agent, `${lb.url}/api/mcp`, provider));
      clients.push(client);
      // Round robin put the steps of one sign-in on different replicas.
      const authorize = servedBy("GET", "/authorize");
      const callback = servedBy("GET", "/oauth/callback");
      assert.equal(authorize.length, 1);
      assert.equal(callback.length, 1);
      assert.notEqual(
        authorize[0],
        callback[0],
        "the sign-in started and completed on one replica",
      );
      const tools = await client.listTools();
      assert.ok(tools.tools.some((tool) => tool.name === "echo_environment"));
      const issuedBy = servedBy("POST", "/token").at(-1)!;
      const usedOn = new Set(servedBy("POST", "/api/mcp"));
      assert.ok(
        usedOn.has(issuedBy === "a" ? "b" : "a"),
        "the token was used on the other replica",
      );
    });

    await t.step(
      "a Streamable HTTP backend session continues on whichever replica serves it",
      async () => {
        lb.route("alternate");
        const sessionIds = new Set<string>();
        for (let i = 0; i < 6; i++) {
          const echoed = await client.callTool({ name: "echo_environment", arguments: {} });
          const headers = (echoed.structuredContent as { headers: Record<string, string> }).headers;
          sessionIds.add(headers["mcp-session-id"]);
        }
        // One backend session, whichever replica forwarded each call.
        assert.equal(sessionIds.size, 1, `backend sessions: ${[...sessionIds].join(", ")}`);
        const calls = lb.served.filter((r) => r.method === "POST" && r.path === "/api/mcp").slice(
          -6,
        );
        assert.deepEqual(new Set(calls.map((r) => r.replica)), new Set(["a", "b"]));
        // The session id names the replica that opened it, for load balancers that route by it.
        const sessionId = (client.transport as { sessionId?: string }).sessionId!;
        assert.match(sessionId, /^[ab]\.[0-9a-f]{32}$/);
        await (client.transport as unknown as { terminateSession(): Promise<void> })
          .terminateSession();
        await client.close();
      },
    );

    await t.step("a refresh on one replica rotates for both", async () => {
      const tokens = provider.savedTokens!;
      const clientId = provider.clientInfo!.client_id;
      lb.route("a");
      const rotated = await token(lb.url, {
        grant_type: "refresh_token",
        refresh_token: tokens.refresh_token!,
        client_id: clientId,
      });
      assert.equal(rotated.status, 200, JSON.stringify(rotated.json));
      lb.route("b");
      const replayed = await token(lb.url, {
        grant_type: "refresh_token",
        refresh_token: tokens.refresh_token!,
        client_id: clientId,
      });
      assert.equal(replayed.status, 400);
      assert.equal(replayed.json.error, "invalid_grant");
      // Replaying a rotated token revokes the grant everywhere: the new one is refused too.
      lb.route("a");
      const after = await token(lb.url, {
        grant_type: "refresh_token",
        refresh_token: rotated.json.refresh_token,
        client_id: clientId,
      });
      assert.equal(after.json.error, "invalid_grant");
    });

    await t.step("a stdio session lives in its replica: elsewhere it is not found", async () => {
      const fresh = new MemoryOAuthProvider();
      // Sticky, as a load balancer routing by the session id's replica prefix would be.
      lb.route("a");
      const { client: other } = await connectWithOAuth(agent, `${lb.url}/local/mcp`, fresh);
      clients.push(other);
      await other.close();
      const bearer = { authorization: `Bearer ${fresh.savedTokens!.access_token}` };
      lb.route("a");
      const init = await post(`${lb.url}/local/mcp`, INIT, mcpHeaders(bearer));
      assert.equal(init.status, 200, init.text);
      const session = init.headers.get("mcp-session-id")!;
      assert.match(session, /^a\./);
      lb.route("b");
      const elsewhere = await post(
        `${lb.url}/local/mcp`,
        { jsonrpc: "2.0", id: 2, method: "tools/list" },
        mcpHeaders({ ...bearer, "mcp-session-id": session }),
      );
      assert.equal(elsewhere.status, 404);
      lb.route("a");
      const home = await post(
        `${lb.url}/local/mcp`,
        { jsonrpc: "2.0", id: 2, method: "tools/list" },
        mcpHeaders({ ...bearer, "mcp-session-id": session }),
      );
      assert.equal(home.status, 200, home.text);
    });
  } finally {
    // A client left open after a failed step holds a stream through the balancer: close the
    // clients, then the replicas (which ends any stream left), and the balancer last.
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await replicas.a.close();
    await replicas.b.close();
    await lb.close();
    await backend.close();
    await idp.close();
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
