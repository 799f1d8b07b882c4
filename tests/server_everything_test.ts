/**
 * A real third-party backend: the shipped config.yaml's demo server
 * (`npm:@modelcontextprotocol/server-everything` over stdio), driven by the SDK client.
 */
import assert from "node:assert/strict";
import { connectClient } from "./fixtures/client.ts";
import { startGateway } from "./fixtures/gateway.ts";

const EVERYTHING = "npm:@modelcontextprotocol/server-everything@2026.8.31";

Deno.test("the shipped demo server (server-everything over stdio) works through the gateway", async () => {
  // Fetch the package once with this process's environment; the backend child then starts
  // from the cache with the empty environment the gateway gives it.
  const cached = await new Deno.Command("deno", {
    args: ["cache", "--no-config", EVERYTHING],
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.equal(cached.code, 0, new TextDecoder().decode(cached.stderr));

  const shipped = await Deno.readTextFile(new URL("../config.yaml", import.meta.url));
  const yaml = shipped
    .replace(/^listen: .*$/m, "")
    .replace(/^baseUrl: .*$/m, "baseUrl: http://127.0.0.1:{{PORT}}")
    .replace(/^storage: .*$/m, 'storage: ":memory:"');
  const gw = await startGateway(yaml, {});
  try {
    for (const front of ["streamable", "sse"] as const) {
      const client = await connectClient(gw.url, "demo", front, "dev-token");
      try {
        assert.equal(client.getServerVersion()?.name, "mcp-servers/everything");
        const { tools } = await client.listTools();
        assert.ok(tools.some((tool) => tool.name === "echo"), "server-everything lists echo");
        const echoed = await client.callTool({ name: "echo", arguments: { message: "through" } });
        assert.match(JSON.stringify(echoed.content), /through/);
        const sum = await client.callTool({ name: "get-sum", arguments: { a: 2, b: 3 } });
        assert.match(JSON.stringify(sum.content), /5/);
      } finally {
        await client.close();
      }
    }
  } finally {
    await gw.close();
  }
});
