/**
 * A client that stops reading while its backend floods it: the gateway holds at most
 * limits.maxStreamBuffer for that stream, then cuts it. A Streamable HTTP client resumes from
 * its last event id and still gets its answer (from a replay log that is bounded too); a legacy
 * SSE session, which cannot resume, ends. Other sessions are served throughout.
 */
import assert from "node:assert/strict";
import { startHttpFixture } from "./fixtures/fixture_server.ts";
import { FIXTURE_STDIO, startGateway, type TestGateway } from "./fixtures/gateway.ts";
import { INIT, mcpHeaders, openSession, post } from "./fixtures/raw.ts";
import { waitUntil, within } from "./fixtures/waits.ts";

const BUFFER = 1_048_576;
const NOTE_SIZE = 16 * 1024;
/** 32 MiB of notifications: far past the buffer and what the sockets themselves absorb. */
const FLOOD = { name: "flood", arguments: { count: 2_000, size: NOTE_SIZE } };
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The raw connections that stopped reading. Each is closed when the test ends, pass or fail:
 * the gateway's server cannot shut down while one holds an undelivered response.
 */
const held = new Set<Deno.Conn>();

function release(connection: Deno.Conn): void {
  if (!held.delete(connection)) return;
  try {
    connection.close();
  } catch { /* the gateway closed it first */ }
}

/**
 * Sends one HTTP/1.1 request on a raw connection and reads until `until` has appeared in what
 * came back (the head, say, or a first event); after that nobody reads the connection.
 */
async function requestThenStopReading(
  url: string,
  method: string,
  headers: Record<string, string>,
  body = "",
  until = "\r\n\r\n",
): Promise<{ connection: Deno.Conn; received: string }> {
  const target = new URL(url);
  const connection = await Deno.connect({ hostname: "127.0.0.1", port: Number(target.port) });
  held.add(connection);
  const lines = [`${method} ${target.pathname}${target.search} HTTP/1.1`, `host: ${target.host}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  lines.push(`content-length: ${encoder.encode(body).byteLength}`);
  await connection.write(encoder.encode(`${lines.join("\r\n")}\r\n\r\n${body}`));
  let received = "";
  const buffer = new Uint8Array(4_096);
  for (let reads = 0; reads < 100 && !received.includes(until); reads++) {
    const n = await within(
      `"${until.trim() || "the response head"}" from ${url}`,
      connection.read(buffer),
    );
    if (n === null) break;
    received += decoder.decode(buffer.subarray(0, n));
  }
  assert.ok(received.includes(until), `no "${until}" in: ${received.slice(0, 300)}`);
  return { connection, received };
}

function cuts(gw: TestGateway, server: string): number {
  const line = gw.gateway.metrics().split("\n").find((l) =>
    l.startsWith(`gatehouse_slow_reader_cuts_total{server="${server}"}`)
  );
  return line ? Number(line.split(" ").pop()) : 0;
}

/** Someone else, on the same server, is answered while the flood runs. */
async function bystanderIsServed(url: string): Promise<void> {
  const session = await openSession(url);
  const call = await post(
    url,
    { jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "test_simple_text" } },
    mcpHeaders({ "mcp-session-id": session }),
  );
  assert.equal(call.status, 200);
  assert.ok(JSON.stringify(call.json).includes("simple text"), call.text);
}

/** Reads SSE events from a response until one answers request `id`; the events seen. */
async function readUntilAnswer(response: Response, id: number): Promise<unknown[]> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: unknown[] = [];
  let pending = "";
  const deadline = setTimeout(() => reader.cancel(), 60_000);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      pending += value;
      let end: number;
      while ((end = pending.indexOf("\n\n")) >= 0) {
        const data = pending.slice(0, end).split("\n").filter((l) => l.startsWith("data: "));
        pending = pending.slice(end + 2);
        if (data.length === 0 || data[0] === "data: ") continue;
        const message = JSON.parse(data.map((l) => l.slice(6)).join("\n"));
        events.push(message);
        if (message.id === id) return events;
      }
    }
  } finally {
    clearTimeout(deadline);
    await reader.cancel().catch(() => {});
  }
  return events;
}

Deno.test("slow readers: a flooded stream is cut at limits.maxStreamBuffer, the client resumes, others are served", async (t) => {
  const backend = await startHttpFixture();
  const gw = await startGateway(`
limits: { maxMessageBytes: 256KiB, maxStreamBuffer: 1MiB, requestTimeout: 30s }
rateLimits: { mcpPerUser: off }
servers:
  stdio:
    transport: stdio
    ${FIXTURE_STDIO}
    public: true
  http: { transport: streamable-http, url: "${backend.url}", public: true }
`);
  try {
    await t.step(
      "a POST answered with SSE, never read: cut, then resumed with Last-Event-ID",
      async () => {
        const url = `${gw.url}/stdio/mcp`;
        const session = await openSession(url);
        const call = { jsonrpc: "2.0", id: 2, method: "tools/call", params: FLOOD };
        // Read up to the priming event (its id names the stream), then never again.
        const { connection, received } = await requestThenStopReading(
          url,
          "POST",
          mcpHeaders({ "mcp-session-id": session }),
          JSON.stringify(call),
          "\n\n",
        );
        const primingId = /id: (\d+-\d+)/.exec(received)?.[1];
        assert.ok(primingId, received);
        await waitUntil("the stream to be cut", () => cuts(gw, "stdio") === 1);
        assert.ok(gw.logs.some((l) => l.includes("client read its stream too slowly")));
        await bystanderIsServed(url);
        // Resume once the backend is done, so what comes back is only the replay log (on a
        // loaded machine the flood may still be running, and its live events would count too).
        await waitUntil(
          "the flooding call to be answered by the backend",
          () => gw.gateway.sessions.get(session as never)?.pendingCount === 0,
        );

        const resumed = await fetch(url, {
          headers: mcpHeaders({
            accept: "text/event-stream",
            "mcp-session-id": session,
            "last-event-id": primingId,
          }),
        });
        assert.equal(resumed.status, 200);
        const events = await readUntilAnswer(resumed, 2);
        const answer = events.at(-1) as { id: number; result: { content: { text: string }[] } };
        assert.equal(answer.id, 2);
        assert.equal(answer.result.content[0].text, "flooded 2000");
        // The replay log is bounded (half the buffer), so most notifications were dropped.
        const notes = events.length - 1;
        assert.ok(notes * NOTE_SIZE <= BUFFER / 2, `${notes} notifications replayed`);
        release(connection);
      },
    );

    await t.step("an unread GET stream while a POST answered with JSON floods it", async () => {
      const url = `${gw.url}/http/mcp`;
      const session = await openSession(url);
      const { connection } = await requestThenStopReading(url, "GET", {
        accept: "text/event-stream",
        "mcp-session-id": session,
      });
      // Notifications of a JSON-answered request travel on the GET stream.
      const call = post(
        url,
        { jsonrpc: "2.0", id: 3, method: "tools/call", params: FLOOD },
        mcpHeaders({ accept: "application/json", "mcp-session-id": session }),
      );
      await waitUntil("the GET stream to be cut", () => cuts(gw, "http") === 1);
      await bystanderIsServed(url);
      const answered = await call;
      assert.equal(answered.status, 200);
      assert.deepEqual(
        (answered.json as { result: { content: unknown[] } }).result.content,
        [{ type: "text", text: "flooded 2000" }],
      );
      // The session lives on: its client may open the GET stream again.
      const again = await fetch(url, {
        headers: mcpHeaders({ accept: "text/event-stream", "mcp-session-id": session }),
      });
      assert.equal(again.status, 200);
      await again.body?.cancel();
      release(connection);
    });

    await t.step("a legacy SSE stream never read: cut, and its session ends", async () => {
      const before = cuts(gw, "stdio");
      const { connection, received } = await requestThenStopReading(
        `${gw.url}/stdio/sse`,
        "GET",
        { accept: "text/event-stream" },
        "",
        "sessionId=",
      );
      const endpoint = /data: (\S+)/.exec(received)![1];
      const sessionId = new URL(endpoint, gw.url).searchParams.get("sessionId")!;
      const send = (message: unknown) =>
        fetch(new URL(endpoint, gw.url), {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(message),
        }).then((response) => response.body?.cancel());
      await send(INIT);
      await send({ jsonrpc: "2.0", method: "notifications/initialized" });
      await send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: FLOOD });
      await waitUntil("the stream to be cut", () => cuts(gw, "stdio") === before + 1);
      await waitUntil("the session to end", () => !gw.gateway.sessions.get(sessionId as never));
      await bystanderIsServed(`${gw.url}/stdio/mcp`);
      release(connection);
    });
  } finally {
    for (const connection of held) release(connection);
    await gw.close();
    await backend.close();
  }
});
