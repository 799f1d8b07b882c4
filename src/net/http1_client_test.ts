import assert from "node:assert/strict";
import { Http1Client, QUICK_CLOSE_MS } from "./http1_client.ts";
import { testClock } from "../../tests/fixtures/clock.ts";
import { refusedPort } from "../../tests/fixtures/ports.ts";
import { json, rawServer, write } from "../../tests/fixtures/raw_http_server.ts";
import { waitUntil } from "../../tests/fixtures/waits.ts";

Deno.test("Http1Client.fetch() reuses one connection for answers with a length, and sends what fetch sends", async () => {
  const heads: string[] = [];
  const server = rawServer(async ({ head, body }, conn) => {
    heads.push(head);
    await write(conn, json(`{"echo":${body}}`, "mcp-session-id: s-1\r\n"));
  });
  const client = new Http1Client({ userAgent: "gatehouse/test" });
  try {
    for (let i = 0; i < 3; i++) {
      const response = await client.fetch(server.url, {
        method: "POST",
        headers: new Headers({ "content-type": "application/json", "mcp-session-id": "s-1" }),
        body: JSON.stringify({ n: i }),
      });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("mcp-session-id"), "s-1");
      assert.deepEqual(await response.json(), { echo: { n: i } });
    }
    assert.equal(server.connections, 1, "one kept-alive connection");
    assert.match(heads[0], /^POST \/mcp HTTP\/1\.1\r\nhost: 127\.0\.0\.1:\d+\r\n/);
    assert.match(heads[0], /\r\ncontent-type: application\/json\r\n/);
    assert.match(heads[0], /\r\nuser-agent: gatehouse\/test\r\n/);
    assert.match(heads[0], /\r\ncontent-length: 7$/);
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("Http1Client.fetch() streams a chunked SSE answer as it arrives, then reuses the connection", async () => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => release = resolve);
  const server = rawServer(async ({ index }, conn) => {
    if (index > 0) return void await write(conn, json("{}"));
    await write(
      conn,
      "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
    );
    const event = "event: message\ndata: first\n\n";
    await write(conn, `${event.length.toString(16)}\r\n${event}\r\n`);
    await released;
    const last = "data: last\n\n";
    await write(conn, `${last.length.toString(16)};ext=1\r\n${last}\r\n0\r\n\r\n`);
  });
  const client = new Http1Client();
  try {
    const response = await client.fetch(server.url, { method: "POST", body: "{}" });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    assert.equal((await reader.read()).value, "event: message\ndata: first\n\n", "before the end");
    release();
    assert.equal((await reader.read()).value, "data: last\n\n");
    assert.equal((await reader.read()).done, true);
    assert.equal(client.idleConnections, 1);
    await (await client.fetch(server.url, { method: "POST", body: "{}" })).text();
    assert.equal(server.connections, 1);
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("Http1Client.fetch() drops an idle connection the server closed and connects again", async () => {
  const server = rawServer(async ({ index }, conn) => {
    await write(conn, json(`{"n":${index}}`));
    // After the first answer the server closes at once; after the second it closes the
    // socket only when the next request arrives (the race a kept-alive client must survive).
    if (index === 0) conn.close();
  });
  const client = new Http1Client();
  try {
    assert.deepEqual(await (await client.fetch(server.url)).json(), { n: 0 });
    // The idle connection notices the close on its own.
    await waitUntil("the idle connection to be dropped", () => client.idleConnections === 0);
    assert.deepEqual(await (await client.fetch(server.url)).json(), { n: 1 });
    assert.equal(server.connections, 2);
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("Http1Client.fetch() sends a POST again once, on a new connection, when a reused connection closes at once without a byte of answer", async () => {
  // A backend restarted (or its keep-alive timeout run out) just as the next call went out: the
  // old connection takes the request and ends without a word. Before, initialize got a 502.
  const server = rawServer(async ({ index }, conn) => {
    if (index === 1) return conn.close();
    await write(conn, json(`{"n":${index}}`));
  });
  const client = new Http1Client();
  try {
    const first = await client.fetch(server.url, { method: "POST", body: "1" });
    assert.deepEqual(await first.json(), { n: 0 });
    const second = await client.fetch(server.url, { method: "POST", body: "2" });
    assert.deepEqual(await second.json(), { n: 2 }, "answered on the new connection");
    assert.equal(server.connections, 2, "sent again on a second connection, once");
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("Http1Client.fetch() does not send a POST again when the backend had it a while before closing without an answer", async () => {
  // Byte-exact: the server reads the second POST in full, works on it (the clock moves past
  // QUICK_CLOSE_MS), and closes the connection without a word, as a backend that crashed
  // mid-call or timed out would: it may have run the call, so it is not run again.
  const clock = testClock();
  clock.freeze();
  const server = rawServer(async ({ index }, conn) => {
    if (index === 1) {
      clock.advance(QUICK_CLOSE_MS);
      return conn.close();
    }
    await write(conn, json(`{"n":${index}}`));
  });
  const client = new Http1Client({ clock });
  try {
    const first = await client.fetch(server.url, { method: "POST", body: "1" });
    assert.deepEqual(await first.json(), { n: 0 });
    await assert.rejects(
      client.fetch(server.url, { method: "POST", body: "2" }),
      (error: Error) => {
        assert.ok(error instanceof TypeError);
        assert.match(
          error.message,
          /^the backend closed the connection before answering; the request was not retried because it may have been processed \(127\.0\.0\.1:\d+\)$/,
        );
        return true;
      },
    );
    assert.equal(server.requests, 2, "the second POST ran once, not twice");
    assert.equal(server.connections, 1, "no second connection was opened to send it again");
    // The next call gets a new connection and goes through.
    const third = await client.fetch(server.url, { method: "POST", body: "3" });
    assert.deepEqual(await third.json(), { n: 2 });
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("Http1Client.fetch() sends an idempotent request again once when a reused connection dies before answering", async () => {
  const server = rawServer(async ({ index }, conn) => {
    if (index === 1) return conn.close(); // read the request, answered nothing
    await write(conn, json(`{"n":${index}}`));
  });
  const client = new Http1Client();
  try {
    assert.deepEqual(await (await client.fetch(server.url)).json(), { n: 0 });
    assert.deepEqual(await (await client.fetch(server.url, { method: "GET" })).json(), { n: 2 });
    assert.equal(server.requests, 3);
    // On a fresh connection there is no second try: the error reaches the caller.
    const fresh = new Http1Client();
    const dying = rawServer((_, conn) => Promise.resolve(conn.close()));
    await assert.rejects(fresh.fetch(dying.url), /closed the connection before answering \(/);
    assert.equal(dying.requests, 1);
    fresh.close();
    await dying.close();
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("Http1Client.fetch() refuses header values that would split the request, and reports refused connections", async () => {
  const server = rawServer(async (_, conn) => void await write(conn, json("{}")));
  const client = new Http1Client();
  try {
    await assert.rejects(
      client.fetch(server.url, { headers: { authorization: "Bearer x\r\nx-admin: 1" } }),
      TypeError,
    );
    await assert.rejects(client.fetch(server.url, { headers: { "bad name": "1" } }), TypeError);
    assert.equal(server.requests, 0, "nothing was sent");
    await server.close();
    const port = await refusedPort();
    await assert.rejects(client.fetch(`http://127.0.0.1:${port}/mcp`), (error: Error) => {
      assert.ok(error instanceof TypeError);
      assert.match(error.message, new RegExp(`127\\.0\\.0\\.1:${port}`));
      return true;
    });
  } finally {
    client.close();
  }
});

Deno.test("Http1Client.fetch() ends a streamed answer when its signal aborts, and closes that connection", async () => {
  const server = rawServer(async (_, conn) => {
    await write(conn, "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n: hello\n\n");
  });
  const client = new Http1Client();
  const controller = new AbortController();
  try {
    const response = await client.fetch(server.url, { signal: controller.signal });
    const reader = response.body!.getReader();
    assert.ok((await reader.read()).value);
    const next = reader.read();
    controller.abort(new Error("the session ended"));
    await assert.rejects(next, /the session ended/);
    assert.equal(client.idleConnections, 0);
    await assert.rejects(client.fetch(server.url, { signal: controller.signal }), /session ended/);
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("Http1Client.fetch() handles interim answers, no-body answers, Connection: close, bodies to EOF and gzip", async () => {
  const gzipped = new Uint8Array(
    await new Response(
      new Blob(['{"zipped":true}']).stream().pipeThrough(new CompressionStream("gzip")),
    ).arrayBuffer(),
  );
  const server = rawServer(async ({ index }, conn) => {
    switch (index) {
      case 0:
        return void await write(conn, `HTTP/1.1 100 Continue\r\n\r\n${json('{"after":"100"}')}`);
      case 1:
        return void await write(conn, "HTTP/1.1 204 No Content\r\n\r\n");
      case 2:
        return void await write(conn, json('{"last":true}', "connection: close\r\n"));
      case 3: {
        await write(
          conn,
          `HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: ${gzipped.length}\r\n\r\n`,
        );
        return void await write(conn, gzipped);
      }
      default:
        await write(conn, 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{"to":');
        await write(conn, '"eof"}');
        conn.close();
    }
  });
  const client = new Http1Client();
  try {
    assert.deepEqual(await (await client.fetch(server.url)).json(), { after: "100" });
    const empty = await client.fetch(server.url, { method: "DELETE" });
    assert.equal(empty.status, 204);
    assert.equal(empty.body, null);
    assert.deepEqual(await (await client.fetch(server.url)).json(), { last: true });
    assert.equal(client.idleConnections, 0, "Connection: close is honoured");
    assert.deepEqual(await (await client.fetch(server.url)).json(), { zipped: true });
    assert.deepEqual(await (await client.fetch(server.url)).json(), { to: "eof" });
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("Http1Client.fetch() refuses malformed answers with a TypeError instead of guessing", async () => {
  const answers = [
    "HTTP/2 200\r\n\r\n",
    "HTTP/1.1 200 OK\r\ncontent-length: 5\r\ncontent-length: 6\r\n\r\nhello!",
    "HTTP/1.1 200 OK\r\n folded: header\r\n\r\n",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
  ];
  const server = rawServer(async ({ index }, conn) => {
    await write(conn, answers[index % answers.length]);
    conn.close();
  });
  const client = new Http1Client();
  try {
    for (let i = 0; i < answers.length; i++) {
      await assert.rejects(
        client.fetch(server.url).then((response) => response.text()),
        TypeError,
        `answer ${i}`,
      );
    }
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("Http1Client.fetch() declares the UTF-8 length of string bodies, whatever their characters", async () => {
  const bodies: string[] = [];
  const server = rawServer(async ({ body }, conn) => {
    bodies.push(body);
    await write(conn, json("{}"));
  });
  const client = new Http1Client();
  try {
    const texts = [
      "plain",
      "é ü ß",
      "日本語",
      "emoji 🎉 pair",
      "lone \ud800 surrogate",
      "\udc00 low",
    ];
    for (const text of texts) {
      // A wrong length would leave the server waiting for bytes: bounded, so it fails instead.
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(new Error(`no answer for ${text}`)), 30_000);
      try {
        await (await client.fetch(server.url, {
          method: "POST",
          body: JSON.stringify(text),
          signal: controller.signal,
        })).text();
      } finally {
        clearTimeout(timer);
      }
    }
    // The test server splits requests by the declared length: a wrong one garbles the next.
    assert.deepEqual(
      bodies,
      texts.map((t) => new TextDecoder().decode(new TextEncoder().encode(JSON.stringify(t)))),
    );
  } finally {
    client.close();
    await server.close();
  }
});
