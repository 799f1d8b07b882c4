import assert from "node:assert/strict";
import { Http1Client } from "./http1_client.ts";
import { STALE_CHECK_AFTER_MS } from "./http1_pool.ts";
import { json, rawServer, write } from "../../tests/fixtures/raw_http_server.ts";
import { testClock } from "../../tests/fixtures/clock.ts";

/**
 * A server that answers one request per connection and then holds it without reading, so that
 * closing it sends the FIN at once (a socket with a read pending closes only on a later turn
 * of the event loop, which would let the client notice on its own).
 */
function oneAnswerServer() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  let requests = 0;
  let connections = 0;
  const accepting = (async () => {
    for await (const conn of listener) {
      connections++;
      void (async () => {
        const buffer = new Uint8Array(4096);
        let text = "";
        try {
          // Each test request's body is a quoted number: it ends the request.
          while (!/\r\n\r\n"\d+"$/.test(text)) {
            const n = await conn.read(buffer);
            if (n === null) return;
            text += new TextDecoder().decode(buffer.subarray(0, n));
          }
          const n = requests++;
          await write(conn, json(`{"n":${n}}`));
          held.push(conn);
        } catch { /* closed by the test */ }
      })();
    }
  })();
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/mcp`,
    get requests() {
      return requests;
    },
    get connections() {
      return connections;
    },
    /** Closes the connections it holds, as a keep-alive timeout would. */
    closeIdle() {
      for (const conn of held.splice(0)) conn.close();
    },
    async close() {
      listener.close();
      this.closeIdle();
      await accepting.catch(() => {});
    },
  };
}

Deno.test("IdlePool.take() sees that the server closed an idle connection before a POST is written on it", async () => {
  const server = oneAnswerServer();
  const clock = testClock();
  clock.freeze();
  const client = new Http1Client({ clock });
  try {
    const first = await client.fetch(server.url, { method: "POST", body: '"0"' });
    assert.deepEqual(await first.json(), { n: 0 });
    assert.equal(client.idleConnections, 1);
    for (let n = 1; n <= 5; n++) {
      // The server ends the connection after a quiet spell (its keep-alive timeout, say) and
      // the next call starts at once, before the client's event loop has had a turn to notice:
      // only the check made just before reuse can tell that the connection is gone.
      clock.advance(STALE_CHECK_AFTER_MS);
      server.closeIdle();
      const next = await client.fetch(server.url, { method: "POST", body: `"${n}"` });
      assert.deepEqual(await next.json(), { n }, "no error: a new connection was used");
      assert.equal(server.requests, n + 1, "each POST reached the server once");
      assert.equal(server.connections, n + 1);
    }
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("IdlePool.take() does not reuse a connection idle longer than idleTimeoutMs", async () => {
  const server = rawServer(async ({ index }, conn) =>
    void await write(conn, json(`{"n":${index}}`))
  );
  const clock = testClock();
  clock.freeze();
  const client = new Http1Client({ idleTimeoutMs: 1_000, clock });
  try {
    await (await client.fetch(server.url, { method: "POST", body: "1" })).text();
    clock.advance(999);
    await (await client.fetch(server.url, { method: "POST", body: "2" })).text();
    assert.equal(server.connections, 1, "reused within the bound");
    clock.advance(1_001);
    assert.deepEqual(
      await (await client.fetch(server.url, { method: "POST", body: "3" })).json(),
      { n: 2 },
    );
    assert.equal(server.connections, 2, "past the bound, a new connection");
    assert.equal(server.requests, 3);
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("IdlePool.release() arms a sweep that closes a connection idle past idleTimeoutMs as the clock passes", async () => {
  const server = rawServer(async ({ index }, conn) =>
    void await write(conn, json(`{"n":${index}}`))
  );
  const clock = testClock();
  clock.freeze();
  const client = new Http1Client({ idleTimeoutMs: 1_000, clock });
  try {
    await (await client.fetch(server.url, { method: "POST", body: "1" })).text();
    assert.equal(client.idleConnections, 1);
    // The sweep runs every idleTimeoutMs / 2 of the clock's time: at 500 and 1000 the
    // connection is within the bound, at 1500 past it.
    clock.advance(1_000);
    assert.equal(client.idleConnections, 1, "kept within the bound");
    clock.advance(500);
    assert.equal(client.idleConnections, 0, "closed by the sweep");
    // Nothing idle is left to reuse: the next request opens a new connection.
    await (await client.fetch(server.url, { method: "POST", body: "2" })).text();
    assert.equal(server.connections, 2);
  } finally {
    client.close();
    await server.close();
  }
});
