/**
 * The real client address behind a real nginx (`trustedProxies`): per-address limits count
 * per client, not per proxy; a client that writes its own X-Forwarded-For (directly, or
 * through the proxy) is not believed; the audit and access log name the real client. Clients
 * are told apart by the loopback address they connect from (127.0.0.x).
 */
import assert from "node:assert/strict";
import { FIXTURE_STDIO } from "./fixtures/gateway.ts";
import { type GatewayProcess, startGatewayProcess } from "./fixtures/gateway_process.ts";
import { type NginxProxy, requestFrom, startNginxProxy } from "./fixtures/nginx_proxy.ts";
import { waitUntil } from "./fixtures/waits.ts";

const TOKEN = "proxied-token-0123456789";

const CONFIG = `listen: 127.0.0.1:{{PORT}}
baseUrl: https://gw.example.com
trustedProxies: [127.0.0.1]
rateLimits:
  registerPerAddress: 2/hour
oauth:
  idp: { provider: oidc, issuer: https://login.example.com, clientId: gatehouse, clientSecret: not-used-here }
  allow: { anyone: true }
servers:
  tools:
    transport: stdio
    ${FIXTURE_STDIO}
    serviceAuths: [{ type: bearer, tokens: ["${TOKEN}"] }]
`;

const REGISTRATION = JSON.stringify({
  client_name: "proxied",
  redirect_uris: ["http://127.0.0.1:9/callback"],
  token_endpoint_auth_method: "none",
});

function register(from: string, url: string, headers: Record<string, string> = {}) {
  return requestFrom(from, `${url}/register`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: REGISTRATION,
  });
}

function logLines(gw: GatewayProcess): Record<string, unknown>[] {
  return gw.logs().split("\n").filter((line) => line.startsWith("{")).map((line) =>
    JSON.parse(line)
  );
}

async function withProxy(test: (gw: GatewayProcess, nginx: NginxProxy) => Promise<void>) {
  const gw = await startGatewayProcess(CONFIG);
  let nginx: NginxProxy | undefined;
  try {
    nginx = await startNginxProxy(`127.0.0.1:${gw.port}`);
    await test(gw, nginx);
  } finally {
    await nginx?.stop();
    await gw.close();
  }
}

Deno.test("behind nginx, registerPerAddress counts each real client, and a client's own X-Forwarded-For is not believed", async () => {
  await withProxy(async (gw, nginx) => {
    // Two registrations an hour per address: the third from 127.0.0.2 is refused…
    assert.equal((await register("127.0.0.2", nginx.url)).status, 201);
    assert.equal((await register("127.0.0.2", nginx.url)).status, 201);
    assert.equal((await register("127.0.0.2", nginx.url)).status, 429);
    // …while another machine behind the same proxy is not slowed by it.
    assert.equal((await register("127.0.0.3", nginx.url)).status, 201);
    // Through the proxy, naming someone else in X-Forwarded-For: the proxy appends the address
    // it saw, and that right-most one is the client. 127.0.0.2's bucket is empty; this is not.
    const spoofed = { "x-forwarded-for": "127.0.0.3" };
    assert.equal((await register("127.0.0.2", nginx.url, spoofed)).status, 429);
    // Directly, not from a trusted proxy: the headers are ignored, the socket's peer counts.
    const direct = { "x-forwarded-for": "127.0.0.3", forwarded: "for=127.0.0.3" };
    assert.equal((await register("127.0.0.4", gw.url, direct)).status, 201);
    assert.equal((await register("127.0.0.4", gw.url, direct)).status, 201);
    assert.equal((await register("127.0.0.4", gw.url, direct)).status, 429);
    // 127.0.0.3 had one registration: it still has one left, whatever was claimed in its name.
    assert.equal((await register("127.0.0.3", nginx.url)).status, 201);

    const registrations = () =>
      logLines(gw).filter((line) => line.msg === "request" && line.path === "/register");
    await waitUntil(
      "the access log lines of nine registrations",
      () => registrations().length === 9,
    );
    const clients = logLines(gw).filter((line) =>
      line.msg === "request" && line.path === "/register"
    )
      .map((line) => line.client);
    assert.deepEqual(clients, [
      "127.0.0.2",
      "127.0.0.2",
      "127.0.0.2",
      "127.0.0.3",
      "127.0.0.2",
      "127.0.0.4",
      "127.0.0.4",
      "127.0.0.4",
      "127.0.0.3",
    ]);
  });
});

Deno.test("behind nginx, the audit line of a tool call names the real client", async () => {
  await withProxy(async (gw, nginx) => {
    const url = `${nginx.url}/tools/mcp`;
    const headers = {
      authorization: `Bearer ${TOKEN}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
    const init = await requestFrom("127.0.0.5", url, {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "t", version: "1" },
        },
      }),
    });
    assert.equal(init.status, 200, init.text);
    const session = {
      ...headers,
      "mcp-session-id": init.headers.get("mcp-session-id")!,
      "mcp-protocol-version": "2025-11-25",
    };
    const initialized = await requestFrom("127.0.0.5", url, {
      method: "POST",
      headers: session,
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    });
    assert.equal(initialized.status, 202);
    const call = await requestFrom("127.0.0.6", url, {
      method: "POST",
      headers: { ...session, "x-forwarded-for": "203.0.113.9" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "test_simple_text", arguments: {} },
      }),
    });
    assert.equal(call.status, 200, call.text);
    // A 2026-07-28 call (no session) from yet another machine.
    const stateless = await requestFrom("127.0.0.7", url, {
      method: "POST",
      headers: {
        ...headers,
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "test_simple_text",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: {
          name: "test_simple_text",
          arguments: {},
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
            "io.modelcontextprotocol/clientCapabilities": {},
          },
        },
      }),
    });
    assert.equal(stateless.status, 200, stateless.text);
    const audited = () => logLines(gw).filter((line) => line.msg === "audit");
    await waitUntil("the audit lines of both tool calls", () => audited().length === 2);
    const audit = audited();
    assert.deepEqual(audit.map((line) => [line.target, line.address]), [
      ["test_simple_text", "127.0.0.6"],
      ["test_simple_text", "127.0.0.7"],
    ]);
  });
});

Deno.test("with connections.front: false, Deno.serve owns the port and the socket's peer is the client, whatever headers say", async () => {
  const gw = await startGatewayProcess(
    CONFIG.replace(
      "trustedProxies: [127.0.0.1]",
      "trustedProxies: [127.0.0.1]\nconnections: { front: false }",
    ),
  );
  try {
    const claims = { "x-gatehouse-peer": "203.0.113.1", "x-forwarded-for": "203.0.113.2" };
    assert.equal((await register("127.0.0.8", gw.url, claims)).status, 201);
    const nginx = await startNginxProxy(`127.0.0.1:${gw.port}`);
    try {
      assert.equal((await register("127.0.0.9", nginx.url, claims)).status, 201);
    } finally {
      await nginx.stop();
    }
    const registrations = () =>
      logLines(gw).filter((line) => line.msg === "request" && line.path === "/register");
    await waitUntil(
      "the access log lines of two registrations",
      () => registrations().length === 2,
    );
    assert.deepEqual(registrations().map((line) => line.client), ["127.0.0.8", "127.0.0.9"]);
    assert.ok(
      logLines(gw).some((line) =>
        line.msg === "configuration warning" && line.path === "connections.front"
      ),
      "the start-up log says what front: false gives up",
    );
  } finally {
    await gw.close();
  }
});
