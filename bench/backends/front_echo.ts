/**
 * The connection front's cost alone: one tiny handler answering every request with the same
 * JSON-RPC result, served either straight by `Deno.serve` on TCP or behind the gateway's TCP
 * front (src/net/public_server.ts), as the gateway serves clients.
 *
 *   deno run --allow-net --allow-read --allow-write bench/backends/front_echo.ts direct|front
 */
import { servePublic } from "../../src/net/public_server.ts";
import { createLogger } from "../../src/observability/logger.ts";

const ANSWER = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { content: [] } });
const handler = async (request: Request) => {
  await request.arrayBuffer();
  return new Response(ANSWER, { headers: { "content-type": "application/json" } });
};

if (Deno.args[0] === "front") {
  const server = await servePublic({
    hostname: "127.0.0.1",
    port: 0,
    limits: {
      headerTimeoutMs: 10_000,
      bodyTimeoutMs: 30_000,
      idleTimeoutMs: 75_000,
      sendTimeoutMs: 60_000,
    },
    logger: createLogger("error"),
  }, handler);
  console.log(`listening on ${server.addr.port}`);
} else {
  Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: ({ port }) => console.log(`listening on ${port}`),
  }, handler);
}
