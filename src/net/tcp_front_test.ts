import assert from "node:assert/strict";
import { createLogger } from "../observability/logger.ts";
import { type FrontLimits, TcpFront } from "./tcp_front.ts";
import { PEER_HEADER } from "./request_framing.ts";
import { waitUntil, within } from "../../tests/fixtures/waits.ts";
import { testClock } from "../../tests/fixtures/clock.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const LIMITS: FrontLimits = {
  maxConnections: 100,
  headerTimeoutMs: 10_000,
  bodyTimeoutMs: 30_000,
  idleTimeoutMs: 75_000,
  sendTimeoutMs: 60_000,
};

/**
 * A front on an ephemeral port before a `Deno.serve` on a unix socket, on a frozen clock that
 * only the test moves. `respond` answers each request; what the server saw is kept. A time
 * limit is recorded as `timeout:which`, or `timeout:which (not on the clock)` when it fired
 * outside `advance`: the front's limits are checked on the clock's timer, not a timer of its own.
 */
async function frontFor(
  limits: Partial<FrontLimits> = {},
  respond: (request: Request) => Response | Promise<Response> = async (request) => {
    await request.text();
    return new Response("ok");
  },
) {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/s.sock`;
  const seen: Request[] = [];
  const listening = Promise.withResolvers<void>();
  const server = Deno.serve(
    {
      transport: "unix",
      path,
      onListen: () => listening.resolve(),
      // A body the front cut off fails its read (BadResource): expected here, and without
      // this Deno.serve would print its stack into a passing test's output.
      onError: () => new Response(null, { status: 400 }),
    },
    (request) => (seen.push(request), respond(request)),
  );
  await listening.promise;
  const clock = testClock();
  clock.freeze();
  let advancing = false;
  const events: string[] = [];
  const front = TcpFront.listen({
    hostname: "127.0.0.1",
    port: 0,
    upstream: path,
    limits: { ...LIMITS, ...limits },
    logger: createLogger("error", () => {}),
    clock,
    events: {
      shed: (reason) => events.push(`shed:${reason}`),
      timedOut: (which) => events.push(`timeout:${which}${advancing ? "" : " (not on the clock)"}`),
    },
  });
  const held: Deno.Conn[] = [];
  return {
    front,
    seen,
    events,
    advance(ms: number) {
      advancing = true;
      try {
        clock.advance(ms);
      } finally {
        advancing = false;
      }
    },
    async connect(): Promise<Deno.Conn> {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port: front.addr.port });
      held.push(conn);
      return conn;
    },
    async close() {
      for (const conn of held) {
        try {
          conn.close();
        } catch { /* closed by the front */ }
      }
      await front.stopAccepting();
      front.closeAll();
      await within("the unix server to shut down", server.shutdown());
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Reads until the peer closes; what arrived. */
async function readToEnd(conn: Deno.Conn): Promise<string> {
  let text = "";
  const buffer = new Uint8Array(4096);
  for (;;) {
    const n = await within("the front to answer or close", conn.read(buffer).catch(() => null));
    if (n === null) return text;
    text += decoder.decode(buffer.subarray(0, n));
  }
}

Deno.test("TcpFront passes requests through with the client's address, and answers come back", async () => {
  const t = await frontFor(
    {},
    async (request) =>
      new Response(`peer=${request.headers.get(PEER_HEADER)} body=${await request.text()}`),
  );
  try {
    const response = await fetch(`http://127.0.0.1:${t.front.addr.port}/x`, {
      method: "POST",
      body: "payload",
    });
    assert.equal(await response.text(), "peer=127.0.0.1 body=payload");
  } finally {
    await t.close();
  }
});

Deno.test("TcpFront carries large bodies whole each way, declared or chunked, between small requests", async () => {
  const t = await frontFor({}, async (request) => {
    const body = await request.text();
    return new Response(`${body.length}:${body.slice(0, 3)}${body.slice(-3)}:${body}`);
  });
  const url = `http://127.0.0.1:${t.front.addr.port}/x`;
  try {
    for (const size of [5, 200_000, 70_000, 3]) {
      const body = `<${"é0123456789".repeat(Math.ceil(size / 11)).slice(0, size)}>`;
      const declared = await fetch(url, { method: "POST", body });
      assert.equal(
        await declared.text(),
        `${body.length}:${body.slice(0, 3)}${body.slice(-3)}:${body}`,
      );
      // A stream body goes chunked: its length is not known ahead.
      const chunked = await fetch(url, {
        method: "POST",
        body: ReadableStream.from([body]).pipeThrough(new TextEncoderStream()),
      });
      assert.equal(
        await chunked.text(),
        `${body.length}:${body.slice(0, 3)}${body.slice(-3)}:${body}`,
      );
    }
  } finally {
    await t.close();
  }
});

Deno.test("TcpFront answers 408 to a head that does not arrive in time, and closes a never-used connection once idle", async () => {
  const t = await frontFor();
  try {
    const silent = await t.connect();
    const dribbling = await t.connect();
    await dribbling.write(encoder.encode("GET / HTTP/1.1\r\nHost: x\r\n"));
    const ends = [silent, dribbling].map(readToEnd);
    // Each look moves the clock on (the dribbled bytes may be read after a move).
    await waitUntil("both connections to be closed by their limits", () => {
      t.advance(10_001);
      return t.events.length === 2;
    }, { every: 100 });
    const [silentEnd, dribblingEnd] = await Promise.all(ends);
    assert.match(dribblingEnd, /^HTTP\/1\.1 408 Request Timeout\r\n[^]*connections\.headerTimeout/);
    // A connection opened ahead of need is no slow client: it lasts until idleTimeout, and
    // then closes without an answer (one would fail the request a client later sends on it).
    assert.equal(silentEnd, "");
    assert.deepEqual(t.events.sort(), ["timeout:header", "timeout:idle"]);
    assert.equal(t.seen.length, 0, "nothing reached the server");
  } finally {
    await t.close();
  }
});

Deno.test("TcpFront keeps a never-used connection until idleTimeout has passed on its clock", async () => {
  const t = await frontFor();
  try {
    const silent = await t.connect();
    await waitUntil("the connection to be accepted", () => t.front.connections === 1);
    // Limits are checked every 500 ms of the clock's time; the one at 75 s finds it exactly
    // at the limit, not past it.
    t.advance(75_000);
    assert.deepEqual(t.events, []);
    assert.equal(t.front.connections, 1);
    t.advance(500);
    assert.deepEqual(t.events, ["timeout:idle"]);
    assert.equal(await readToEnd(silent), "", "closed without an answer");
  } finally {
    await t.close();
  }
});

Deno.test("TcpFront closes a connection whose body stalls, and one idle between requests", async () => {
  const t = await frontFor();
  try {
    const stalled = await t.connect();
    await stalled.write(
      encoder.encode("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc"),
    );
    const idle = await t.connect();
    await idle.write(encoder.encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    const answered = new Uint8Array(200);
    await within("the idle connection's answer", idle.read(answered));
    const ends = [stalled, idle].map(readToEnd);
    await waitUntil("the stalled and the idle connection to be closed", () => {
      t.advance(30_001);
      return t.events.length === 2;
    }, { every: 100 });
    assert.deepEqual(await Promise.all(ends), ["", ""], "closed without an answer");
    assert.deepEqual(t.events.sort(), ["timeout:body", "timeout:idle"]);
  } finally {
    await t.close();
  }
});

Deno.test("TcpFront makes room at its cap by dropping the slowest head, then the body held longest, and answers 503 when all are owed answers", async () => {
  const release = Promise.withResolvers<void>();
  const t = await frontFor({ maxConnections: 2 }, async (request) => {
    const body = await request.text();
    if (new URL(request.url).pathname === "/slow") await release.promise;
    return new Response(`ok ${body}`);
  });
  try {
    const silent = await t.connect();
    await waitUntil("the silent connection to be open", () => t.front.connections === 1);
    const older = await t.connect();
    await older.write(encoder.encode("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nab"));
    await waitUntil("two open connections", () => t.front.connections === 2);
    // The silent one goes for the newcomer.
    const response = await fetch(`http://127.0.0.1:${t.front.addr.port}/`);
    assert.equal(await response.text(), "ok ");
    assert.equal(await readToEnd(silent), "");
    // One is mid-body and the newcomer's keep-alive connection is idle: the idle one goes.
    t.advance(1_000);
    const newer = await t.connect();
    await newer.write(
      encoder.encode("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\na"),
    );
    await waitUntil(
      "the idle connection evicted, and the head at the server",
      () => t.events.length === 2 && t.seen.length === 3,
    );
    // Both hold a body open (one request per bodyTimeout keeps such a place for ever): the one
    // sending longest goes, having had no answer, so that a newcomer is not locked out.
    const third = await t.connect();
    await third.write(encoder.encode("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"));
    assert.equal(await readToEnd(older), "", "the body held longest was closed");
    assert.deepEqual(t.events, ["shed:evicted", "shed:evicted", "shed:evicted"]);
    // With the other body done and both waiting for their answers, a newcomer is refused.
    await newer.write(encoder.encode("bcdefghi"));
    await waitUntil("both requests at the server", () => t.seen.length === 4);
    const refused = await t.connect();
    await refused.write(encoder.encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    const text = await readToEnd(refused);
    assert.match(text, /^HTTP\/1\.1 503 Service Unavailable\r\n/);
    assert.match(text, /retry-after: 1\r\n/);
    assert.match(text, /connections\.max/);
    assert.ok(t.events.includes("shed:connection_limit"), t.events.join());
    release.resolve();
    const buffer = new Uint8Array(4096);
    const n = await within("the slow answer", third.read(buffer));
    assert.match(decoder.decode(buffer.subarray(0, n ?? 0)), /^HTTP\/1\.1 200 OK/);
  } finally {
    release.resolve();
    await t.close();
  }
});

Deno.test("TcpFront refuses a request that could smuggle another, before the server sees it", async () => {
  const t = await frontFor();
  try {
    const conn = await t.connect();
    await conn.write(
      encoder.encode(
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n",
      ),
    );
    assert.match(
      await readToEnd(conn),
      /^HTTP\/1\.1 400 Bad Request\r\n[^]*both Content-Length and Transfer-Encoding/,
    );
    const spoof = await t.connect();
    await spoof.write(
      encoder.encode(`GET / HTTP/1.1\r\nHost: x\r\n${PEER_HEADER}: 10.1.2.3\r\n\r\n`),
    );
    assert.match(await readToEnd(spoof), /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.equal(t.seen.length, 0);
  } finally {
    await t.close();
  }
});

Deno.test("TcpFront refuses CONNECT, whose body Deno.serve would read as a request with a forged address", async () => {
  const t = await frontFor();
  try {
    const hidden = `GET /hidden HTTP/1.1\r\nHost: x\r\n${PEER_HEADER}: 10.6.6.6\r\n\r\n`;
    const conn = await t.connect();
    await conn.write(encoder.encode(
      `CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\nContent-Length: ${hidden.length}\r\n\r\n${hidden}`,
    ));
    assert.match(await readToEnd(conn), /^HTTP\/1\.1 400 Bad Request\r\n[^]*CONNECT is not served/);
    assert.equal(t.seen.length, 0);
  } finally {
    await t.close();
  }
});

Deno.test("TcpFront never lets a client speak HTTP/2 to Deno.serve: its preface arrives broken by the front's line", async () => {
  const t = await frontFor();
  try {
    // Straight to Deno.serve, this preface and SETTINGS frame switch the connection to h2c,
    // whose frames the front could not frame or give an address.
    const conn = await t.connect();
    const preface = encoder.encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    await conn.write(new Uint8Array([...preface, 0, 0, 0, 4, 0, 0, 0, 0, 0]));
    assert.match(await readToEnd(conn), /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.equal(t.seen.length, 0);
  } finally {
    await t.close();
  }
});

Deno.test("TcpFront refuses a bare LF that would show the server a header the front did not see", async () => {
  const t = await frontFor();
  try {
    for (
      const hidden of [
        `X-A: 1\n${PEER_HEADER}: 10.1.2.3\r\n`, // a forged client address
        "X-A: 1\nContent-Length: 5\r\n", // a body the front would not time
      ]
    ) {
      const conn = await t.connect();
      await conn.write(encoder.encode(`POST / HTTP/1.1\r\nHost: x\r\n${hidden}\r\nhello`));
      assert.match(await readToEnd(conn), /^HTTP\/1\.1 400 Bad Request\r\n[^]*LF alone/);
    }
    assert.equal(t.seen.length, 0);
  } finally {
    await t.close();
  }
});

Deno.test("TcpFront refuses a flood of empty lines at once, and serves others meanwhile", async () => {
  const t = await frontFor({}, () => new Response("served"));
  try {
    const flood = await t.connect();
    await flood.write(encoder.encode("\r\n".repeat(32 * 1024)));
    assert.match(await readToEnd(flood), /^HTTP\/1\.1 400 Bad Request\r\n[^]*empty lines/);
    const response = await fetch(`http://127.0.0.1:${t.front.addr.port}/health`);
    assert.equal(await response.text(), "served");
  } finally {
    await t.close();
  }
});

Deno.test("TcpFront answers the requests that came whole before a refused one, then refuses", async () => {
  const t = await frontFor({}, async (request) => {
    await request.text();
    return new Response(`answer ${new URL(request.url).pathname}`);
  });
  try {
    const conn = await t.connect();
    await conn.write(encoder.encode(
      "GET /one HTTP/1.1\r\nHost: x\r\n\r\n" +
        "POST /two HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi" +
        "GET /three HTTP/1.1\r\nHost: x\r\nX-A: 1\nX-B: 2\r\n\r\n",
    ));
    const text = await readToEnd(conn);
    assert.match(
      text,
      /^HTTP\/1\.1 200 OK\r\n[^]*answer \/oneHTTP\/1\.1 200 OK\r\n[^]*answer \/twoHTTP\/1\.1 400 Bad Request\r\n[^]*LF alone/,
    );
    assert.deepEqual(t.seen.map((request) => new URL(request.url).pathname), ["/one", "/two"]);
  } finally {
    await t.close();
  }
});

Deno.test("TcpFront keeps the answers of earlier reads' requests when it refuses a later one", async () => {
  const release = Promise.withResolvers<void>();
  const t = await frontFor({}, async (request) => {
    await request.text();
    await release.promise; // still answering when the refused request arrives
    return new Response(`answer ${new URL(request.url).pathname}`);
  });
  try {
    const conn = await t.connect();
    await conn.write(
      encoder.encode("POST /one HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi"),
    );
    await waitUntil("the first request to reach the server", () => t.seen.length === 1);
    await conn.write(encoder.encode("GET /two HTTP/1.1\r\nHost: x\r\nX-A: 1\nX-B: 2\r\n\r\n"));
    // Time for the front to take the refused request before the answer is given (not a limit).
    await new Promise((resolve) => setTimeout(resolve, 100));
    release.resolve();
    const text = await readToEnd(conn);
    assert.match(text, /^HTTP\/1\.1 200 OK\r\n[^]*answer \/oneHTTP\/1\.1 400 Bad Request\r\n/);
    assert.deepEqual(t.seen.map((request) => new URL(request.url).pathname), ["/one"]);
  } finally {
    await t.close();
  }
});

Deno.test("TcpFront disconnects a client that stops taking its answer", async () => {
  const chunk = new Uint8Array(64 * 1024).fill(120);
  // An endless answer: the server has bytes for the client as long as it is connected.
  const t = await frontFor({}, () =>
    new Response(
      new ReadableStream({ pull: (controller) => controller.enqueue(chunk) }),
    ));
  try {
    const reader = await t.connect();
    await reader.write(encoder.encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    await within("the answer to start", reader.read(new Uint8Array(100)));
    // The client reads nothing more: once the socket buffers are full, the front's write
    // waits. Each look moves the clock past the limit, so the first tick after that cuts it.
    await waitUntil("the stalled client to be disconnected", () => {
      t.advance(61_000);
      return t.front.connections === 0;
    }, { every: 100 });
    assert.deepEqual(t.events, ["timeout:send"]);
  } finally {
    await t.close();
  }
});

Deno.test("TcpFront at its cap closes the connection idle longest between requests, never one whose answer is owed", async () => {
  const release = Promise.withResolvers<void>();
  const t = await frontFor({ maxConnections: 3 }, async (request) => {
    await request.text();
    if (new URL(request.url).pathname === "/slow") await release.promise;
    return new Response("ok");
  });
  try {
    // Two kept-alive connections, each answered once: the first is idle longest.
    const ask = async (conn: Deno.Conn, path: string) => {
      await conn.write(encoder.encode(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`));
      const buffer = new Uint8Array(4096);
      let text = "";
      while (!text.endsWith("ok")) {
        const n = await within(`the answer to ${path}`, conn.read(buffer));
        if (n === null) break;
        text += decoder.decode(buffer.subarray(0, n));
      }
      return text;
    };
    const older = await t.connect();
    assert.match(await ask(older, "/one"), /200 OK/);
    t.advance(1_000);
    const newer = await t.connect();
    assert.match(await ask(newer, "/two"), /200 OK/);
    // A third waits for a slow answer: owed, so never closed for a newcomer.
    const waiting = await t.connect();
    await waiting.write(encoder.encode("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"));
    await waitUntil("the slow request to reach the server", () => t.seen.length === 3);
    // The cap is reached: a newcomer is served, in the place of the connection idle longest.
    const newcomer = await t.connect();
    assert.match(await ask(newcomer, "/four"), /200 OK/);
    assert.equal(await readToEnd(older), "", "the idlest connection was closed");
    assert.ok(t.events.includes("shed:evicted"), t.events.join());
    // Then the other idle one goes; the one whose answer is owed still gets it.
    const another = await t.connect();
    assert.match(await ask(another, "/five"), /200 OK/);
    assert.equal(await readToEnd(newer), "");
    release.resolve();
    assert.match(await ask(waiting, "/six").catch(() => ""), /200 OK/);
  } finally {
    release.resolve();
    await t.close();
  }
});

Deno.test("TcpFront: a client that half-closes after its request still gets its answer", async () => {
  const answered = Promise.withResolvers<void>();
  const t = await frontFor({}, async (request) => {
    await request.text();
    // Answered only once the client's half-close has certainly reached the front.
    await answered.promise;
    return new Response("late answer");
  });
  try {
    const conn = await t.connect() as Deno.TcpConn;
    await conn.write(
      encoder.encode("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi"),
    );
    await waitUntil("the server to get the request", () => t.seen.length === 1);
    await conn.closeWrite();
    // Give the half-close time to cross the front before the server answers.
    await new Promise((resolve) => setTimeout(resolve, 100));
    answered.resolve();
    const text = await within("the answer after the half-close", readToEnd(conn));
    assert.match(text, /^HTTP\/1\.1 200 OK/);
    assert.match(text, /late answer$/);
  } finally {
    await t.close();
  }
});
