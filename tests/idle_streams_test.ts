/**
 * Clients that hold many idle streams, then vanish: 2,000 sessions each holding a standalone
 * GET stream; the gateway keeps answering others while they are open, and once the clients hang
 * up every stream is released (no session counts an open stream), the keep-alive timer they
 * share is cleared (it runs while any stream is open, and a stream left in it would keep it)
 * and their connections are closed.
 */
import assert from "node:assert/strict";
import { startHttpFixture } from "./fixtures/fixture_server.ts";
import { startGateway } from "./fixtures/gateway.ts";
import { INIT, mcpHeaders, openSession, post } from "./fixtures/raw.ts";
import { waitUntil } from "./fixtures/waits.ts";
import { KEEPALIVE_MS } from "../src/mcp/front/sse.ts";

const STREAMS = 2_000;

/**
 * Keep-alive intervals set and not yet cleared in this process (the open streams share one).
 * Other intervals (the request deadlines' tick, say) come and go and are not counted.
 */
const liveIntervals = new Set<unknown>();
const realSetInterval = globalThis.setInterval;
const realClearInterval = globalThis.clearInterval;
globalThis.setInterval = ((...args: Parameters<typeof setInterval>) => {
  const id = realSetInterval(...args);
  if (args[1] === KEEPALIVE_MS) liveIntervals.add(id);
  return id;
}) as typeof setInterval;
globalThis.clearInterval = ((id?: Parameters<typeof clearInterval>[0]) => {
  if (id !== undefined) liveIntervals.delete(id);
  realClearInterval(id);
}) as typeof clearInterval;

/** Established TCP connections to the gateway's port, from /proc/net (this machine only). */
function connectionsTo(port: number): number {
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  let count = 0;
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = Deno.readTextFileSync(table);
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      // Server side of each connection: local address on our port, state 01 (established).
      if (fields[1]?.endsWith(`:${hex}`) && fields[3] === "01") count++;
    }
  }
  return count;
}

Deno.test(`${STREAMS} idle GET streams held and then dropped by their clients leave nothing behind`, async () => {
  const backend = await startHttpFixture();
  const gw = await startGateway(`
limits: { sessionsPerUser: ${STREAMS * 2}, maxSessions: ${STREAMS * 2} }
rateLimits: { mcpPerUser: off }
servers:
  http: { transport: streamable-http, url: "${backend.url}", public: true }
`);
  const url = `${gw.url}/http/mcp`;
  const controllers: AbortController[] = [];
  try {
    const ids: string[] = [];
    for (let i = 0; i < STREAMS; i += 50) {
      ids.push(...await Promise.all(Array.from({ length: 50 }, () => openSession(url))));
    }
    const port = Number(new URL(gw.url).port);
    const intervalsBefore = liveIntervals.size;
    const streams = await Promise.all(ids.map(async (id) => {
      const controller = new AbortController();
      controllers.push(controller);
      const response = await fetch(url, {
        headers: mcpHeaders({ accept: "text/event-stream", "mcp-session-id": id }),
        signal: controller.signal,
      });
      return response;
    }));
    assert.ok(streams.every((response) => response.status === 200));
    console.log(`connections holding streams: ${connectionsTo(port)}`);
    assert.ok(connectionsTo(port) >= STREAMS, `only ${connectionsTo(port)} connections open`);
    const holding = [...ids].map((id) => gw.gateway.sessions.get(id as never)!.openStreams);
    assert.equal(holding.filter((n) => n === 1).length, STREAMS);
    assert.equal(liveIntervals.size - intervalsBefore, 1, "one keep-alive timer for all streams");

    // Meanwhile, someone else is served as usual.
    const other = await post(url, INIT);
    assert.equal(other.status, 200);

    // The clients vanish without a word.
    for (const controller of controllers) controller.abort();
    await Promise.all(streams.map((response) => response.body?.cancel().catch(() => {})));
    await waitUntil(
      "every session to count its stream closed",
      () => ids.every((id) => gw.gateway.sessions.get(id as never)?.openStreams === 0),
    );
    assert.equal(liveIntervals.size, intervalsBefore, "keep-alive timers left running");
    // Their connections are closed again (a few kept-alive ones from other requests may stay).
    await waitUntil(
      "the streams' connections to the gateway to close (at most 60 left)",
      () => connectionsTo(port) <= 60,
    );
    console.log(`connections after hang-up: ${connectionsTo(port)}`);
  } finally {
    for (const controller of controllers) controller.abort();
    await gw.close();
    await backend.close();
  }
});
