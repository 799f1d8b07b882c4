/**
 * The smallest Streamable HTTP MCP server that still speaks the protocol: sessions, JSON or SSE
 * answers, 202 for notifications. Written for the bench so that the gateway's own cost is not
 * hidden behind the backend's. No imports; it starts in a few milliseconds.
 *
 *   deno run --allow-net bench/backends/minimal_http.ts <port|0> <json|sse> [extraTools]
 */
const port = Number(Deno.args[0] ?? 0);
const mode = Deno.args[1] === "sse" ? "sse" : "json";
const tools = [
  { name: "echo", description: "Echoes its arguments", inputSchema: { type: "object" } },
  ...Array.from({ length: Number(Deno.args[2] ?? 0) }, (_, i) => ({
    name: `tool_${i}`,
    description: `Extra tool number ${i}`,
    inputSchema: { type: "object", properties: { value: { type: "string" } } },
  })),
];
let sessions = 0;

function result(method: string, params: Record<string, unknown> | undefined): unknown {
  switch (method) {
    case "initialize":
      return {
        protocolVersion: String(params?.protocolVersion ?? "2025-11-25"),
        capabilities: { tools: {} },
        serverInfo: { name: "bench-minimal", version: "1.0.0" },
      };
    case "tools/list":
      return { tools };
    case "tools/call":
      return { content: [{ type: "text", text: JSON.stringify(params?.arguments ?? {}) }] };
    default:
      return {};
  }
}

function answer(body: string, headers: Record<string, string>): Response {
  if (mode === "json") {
    return new Response(body, { headers: { "content-type": "application/json", ...headers } });
  }
  return new Response(`event: message\ndata: ${body}\n\n`, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache", ...headers },
  });
}

Deno.serve({
  hostname: "127.0.0.1",
  port,
  onListen: ({ port }) => console.log(`listening on ${port}`),
}, async (request) => {
  if (request.method === "DELETE") return new Response(null, { status: 200 });
  // No server-initiated messages, so no standalone GET stream (the spec's 405).
  if (request.method !== "POST") return new Response(null, { status: 405 });
  let message: { id?: unknown; method?: string; params?: Record<string, unknown> };
  try {
    message = JSON.parse(await request.text());
  } catch {
    return new Response("not JSON", { status: 400 });
  }
  if (message.id === undefined || typeof message.method !== "string") {
    return new Response(null, { status: 202 });
  }
  const headers: Record<string, string> = message.method === "initialize"
    ? { "mcp-session-id": `bench-${++sessions}` }
    : {};
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: message.id,
    result: result(message.method, message.params),
  });
  return answer(body, headers);
});
