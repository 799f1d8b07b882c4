/**
 * The design card's own floor: a `Deno.serve` handler that passes each POST's bytes to one
 * backend with the gateway's HTTP/1.1 client and returns the answer's bytes, with no
 * authentication, no MCP and no logs. What it costs per call is what any gateway built on
 * `Deno.serve` pays before doing its own work; the nginx anchor prints it beside nginx and
 * the gateway. `front` serves it behind the gateway's TCP front (tcp_front.ts), as the gateway
 * is served; `serve` serves it on the TCP port directly.
 *
 *   deno run --allow-net --allow-read --allow-write --allow-run bench/backends/bare_proxy.ts \
 *     <port|0> <serve|front> <backend url>
 */
import { servePublic } from "../../src/net/public_server.ts";
import { Http1Client } from "../../src/net/http1_client.ts";
import { silentLogger } from "../../src/observability/logger.ts";

const port = Number(Deno.args[0] ?? 0);
const behindFront = Deno.args[1] === "front";
const backend = Deno.args[2];
if (!backend) throw new Error("usage: bare_proxy.ts <port|0> <serve|front> <backend url>");

const client = new Http1Client();
/** The request and answer headers a Streamable HTTP exchange needs carried across. */
const CARRIED = ["content-type", "accept", "mcp-session-id", "mcp-protocol-version"];

/** The `CARRIED` headers of a request or answer that has them. */
function carried(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of CARRIED) {
    const value = headers.get(name);
    if (value !== null) out[name] = value;
  }
  return out;
}

async function pass(request: Request): Promise<Response> {
  const answer = await client.fetch(backend, {
    method: request.method,
    headers: carried(request.headers),
    body: request.method === "POST" ? await request.arrayBuffer() : undefined,
  });
  return new Response(answer.body, { status: answer.status, headers: carried(answer.headers) });
}

if (behindFront) {
  const server = await servePublic({
    hostname: "127.0.0.1",
    port,
    limits: {
      headerTimeoutMs: 10_000,
      bodyTimeoutMs: 30_000,
      idleTimeoutMs: 60_000,
      sendTimeoutMs: 30_000,
    },
    logger: silentLogger,
  }, pass);
  console.log(`listening on ${server.addr.port}`);
} else {
  Deno.serve({
    hostname: "127.0.0.1",
    port,
    onListen: ({ port }) => console.log(`listening on ${port}`),
  }, pass);
}
