import assert from "node:assert/strict";
import { testClock } from "../../../tests/fixtures/clock.ts";
import { within } from "../../../tests/fixtures/waits.ts";
import type { HttpServerConfig } from "../../config/types.ts";
import type { ServerName } from "../../core/ids.ts";
import { Http1Client } from "../../net/http1_client.ts";
import { silentLogger } from "../../observability/logger.ts";
import type { JSONRPCMessage } from "../../sdk.ts";
import { createBackend } from "./connect.ts";

const INIT = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "t", version: "1" },
  },
} as JSONRPCMessage;
const LIST = { jsonrpc: "2.0", id: 1, method: "tools/list" } as JSONRPCMessage;

/** A Streamable HTTP backend on 127.0.0.1 answering as `handle` says; it sees every request. */
function backend(handle: (request: Request, body: string) => Response) {
  const seen: { method: string; headers: Headers }[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const body = await req.text();
    seen.push({ method: req.method, headers: req.headers });
    return handle(req, body);
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/mcp`,
    seen,
    close: () => within("the test backend to shut down", server.shutdown()),
  };
}

/** Answers initialize with session "s-1", everything else as `rest` says. */
const withSession = (rest: (request: Request) => Response) => (req: Request, body: string) =>
  body.includes('"initialize"')
    ? Response.json({ jsonrpc: "2.0", id: 0, result: {} }, { headers: { "mcp-session-id": "s-1" } })
    : rest(req);

function server(url: string, headers: Record<string, string> = {}): HttpServerConfig {
  return {
    name: "api" as ServerName,
    public: true,
    serviceAuths: [],
    protocol: "2025-11-25",
    forwardRoots: true,
    secretValues: [],
    toolChanges: "allow",
    toolChangesDefaulted: true,
    transport: "streamable-http",
    url,
    headers,
    identity: { headers: false, assertion: false },
  };
}

function connect(config: HttpServerConfig, token?: () => Promise<string>) {
  const client = new Http1Client();
  const backend = createBackend(config, { "user.id": "u-1", "user.token": "first-token" }, {
    maxMessageBytes: 1024 * 1024,
    killGraceMs: 5_000,
    clock: testClock(),
    logger: silentLogger,
    fetch: client.fetch,
  }, token);
  const errors: Error[] = [];
  backend.transport.onerror = (error) => errors.push(error);
  return { backend, errors, client };
}

Deno.test("createBackend() tells a Streamable HTTP backend's 404 for its session from other failures", async () => {
  let status = 404;
  const http = backend(withSession(() => new Response("gone", { status })));
  const { backend: connected, errors, client } = connect(server(http.url));
  try {
    await connected.transport.start();
    const early = await connected.transport.send(LIST).catch((error) => error);
    // Before the backend gave a session id, a 404 is not the session's end.
    assert.equal(connected.sessionGone?.(early), false);
    await connected.transport.send(INIT);
    assert.equal(connected.sharedSessionId?.(), "s-1");
    status = 500;
    const failed = await connected.transport.send(LIST).catch((error) => error);
    assert.equal(connected.sessionGone?.(failed), false, "a 500 is not a lost session");
    status = 404;
    const gone = await connected.transport.send(LIST).catch((error) => error);
    assert.equal(connected.sessionGone?.(gone), true);
    assert.equal(errors.at(-1), gone, "the session hears of it through onerror too");
  } finally {
    await connected.detach();
    client.close();
    await http.close();
  }
});

Deno.test("createBackend() ends a Streamable HTTP backend's session with a DELETE when closed", async () => {
  for (const answer of [200, 405]) {
    const http = backend(
      withSession((req) => new Response(null, { status: req.method === "DELETE" ? answer : 202 })),
    );
    const { backend: connected, errors, client } = connect(server(http.url));
    try {
      await connected.transport.start();
      await connected.transport.send(INIT);
      await connected.close();
      const deleted = http.seen.find((s) => s.method === "DELETE");
      assert.equal(deleted?.headers.get("mcp-session-id"), "s-1", `answered ${answer}`);
      assert.deepEqual(errors, [], `a ${answer} to the DELETE is no error`);
    } finally {
      client.close();
      await http.close();
    }
  }
});

Deno.test("createBackend() masks configured secrets a Streamable HTTP backend's refusal echoes", async () => {
  const http = backend((req) =>
    new Response(`denied for ${req.headers.get("authorization")}`, { status: 401 })
  );
  const { backend: connected, errors, client } = connect(
    server(http.url, { Authorization: "Bearer sk-configured-0123456789" }),
  );
  try {
    await connected.transport.start();
    const refused = await connected.transport.send(INIT).catch((error) => error) as Error;
    assert.match(refused.message, /Error POSTing to endpoint: denied for /);
    assert.doesNotMatch(refused.message, /sk-configured/);
    assert.ok(errors.every((error) => !error.message.includes("sk-configured")));
  } finally {
    await connected.detach();
    client.close();
    await http.close();
  }
});

Deno.test("createBackend() sends a Streamable HTTP backend the person's current token on each request", async () => {
  const http = backend(withSession(() => Response.json({ jsonrpc: "2.0", id: 1, result: {} })));
  let token = "first-token";
  const { backend: connected, client } = connect(
    server(http.url, { "X-Api-Key": "{{user.token}}", "X-Who": "{{user.id}}" }),
    () => Promise.resolve(token),
  );
  try {
    await connected.transport.start();
    await connected.transport.send(INIT);
    token = "refreshed-token";
    await connected.transport.send(LIST);
    assert.deepEqual(http.seen.map((s) => s.headers.get("x-api-key")), [
      "first-token",
      "refreshed-token",
    ]);
    assert.deepEqual(http.seen.map((s) => s.headers.get("x-who")), ["u-1", "u-1"]);
  } finally {
    await connected.detach();
    client.close();
    await http.close();
  }
});
