/**
 * An HTTP backend on https with a company CA (here: a self-signed certificate the gateway
 * process trusts through DENO_CERT), reached through the gateway's own HTTP client.
 */
import assert from "node:assert/strict";
import { startGatewayProcess } from "./fixtures/gateway_process.ts";
import { mcpHeaders, openSession, post } from "./fixtures/raw.ts";
import { selfSignedCertificate } from "./fixtures/certificates.ts";
import { within } from "./fixtures/waits.ts";

Deno.test("an https backend signed by a CA the process trusts is reached over kept-alive TLS", async () => {
  const tls = await selfSignedCertificate();
  const agents = new Set<string>();
  let connections = 0;
  const backend = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: tls.cert,
    key: tls.key,
    onListen: () => {},
  }, async (request, info) => {
    agents.add(request.headers.get("user-agent") ?? "");
    void info;
    if (request.method !== "POST") return new Response(null, { status: 405 });
    const message = await request.json();
    if (message.id === undefined) return new Response(null, { status: 202 });
    const result = message.method === "initialize"
      ? {
        protocolVersion: "2025-11-25",
        capabilities: { tools: {} },
        serverInfo: { name: "tls", version: "1" },
      }
      : { content: [{ type: "text", text: `over tls ${message.id}` }] };
    return Response.json({ jsonrpc: "2.0", id: message.id, result }, {
      headers: message.method === "initialize" ? { "mcp-session-id": "tls-session" } : {},
    });
  });
  const counting = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  // A TCP relay in front of the backend counts the connections the gateway opens.
  const relay = (async () => {
    for await (const inbound of counting) {
      connections++;
      const outbound = await Deno.connect({ hostname: "127.0.0.1", port: backend.addr.port });
      void inbound.readable.pipeTo(outbound.writable).catch(() => {});
      void outbound.readable.pipeTo(inbound.writable).catch(() => {});
    }
  })();
  const relayPort = (counting.addr as Deno.NetAddr).port;
  const gw = await startGatewayProcess(
    `listen: 127.0.0.1:{{PORT}}
storage: ":memory:"
servers:
  secure:
    transport: streamable-http
    url: https://localhost:${relayPort}/mcp
    public: true
`,
    { DENO_CERT: tls.certFile },
  );
  try {
    const url = `${gw.url}/secure/mcp`;
    const session = await openSession(url);
    for (let id = 2; id <= 6; id++) {
      const call = await post(
        url,
        { jsonrpc: "2.0", id, method: "tools/call", params: { name: "any", arguments: {} } },
        mcpHeaders({ "mcp-session-id": session }),
      );
      assert.equal(call.status, 200);
      assert.deepEqual(call.json, {
        jsonrpc: "2.0",
        id,
        result: { content: [{ type: "text", text: `over tls ${id}` }] },
      });
    }
    assert.ok(connections <= 2, `${connections} TLS connections for 7 requests`);
    assert.ok([...agents].every((agent) => agent.startsWith("gatehouse/")), [...agents].join());
  } finally {
    await gw.close();
    counting.close();
    await relay.catch(() => {});
    await within("the https backend to shut down", backend.shutdown());
    await Deno.remove(tls.dir, { recursive: true });
  }
});
