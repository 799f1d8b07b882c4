/**
 * The TCP front against `Deno.serve`, byte for byte: generated request heads (and bodies, and
 * requests pipelined behind them) are sent once through the front and once straight to the
 * same `Deno.serve`, whose handler echoes every request it reads. The front may refuse what the
 * server would take (it is stricter on purpose), but whatever it lets through must reach the
 * server split into the same requests, with the same headers and bodies, each carrying the one
 * client address the front added and no other. A difference is a way around the front: a
 * forged address, a hidden body, a request the front never timed.
 */
import { createLogger } from "../../src/observability/logger.ts";
import { PEER_HEADER } from "../../src/net/request_framing.ts";
import { TcpFront } from "../../src/net/tcp_front.ts";
import { waitUntil, within } from "../fixtures/waits.ts";
import { Random } from "./random.ts";

const encoder = new TextEncoder();
const latin1 = new TextDecoder("latin1");

/** What the server read of one request. */
interface Echo {
  method: string;
  target: string;
  headers: [string, string][];
  peers: string[];
  body: string;
}

/** One server with a front before it; cases sent to it one at a time. */
export interface HeadTarget {
  /** Sends `pieces` through the front, or straight to the server; the requests it read. */
  send(pieces: Uint8Array[], through: "front" | "direct"): Promise<Echo[]>;
  close(): Promise<void>;
}

export async function startHeadTarget(): Promise<HeadTarget> {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/s.sock`;
  const listening = Promise.withResolvers<void>();
  let seen: Echo[] = [];
  let inFlight = 0;
  const server = Deno.serve(
    {
      transport: "unix",
      path,
      onListen: () => listening.resolve(),
      onError: () => new Response(null, { status: 500 }),
    },
    async (request) => {
      inFlight++;
      // A Host that is no host ("a b") leaves Deno.serve a URL it cannot parse.
      let target: string;
      try {
        const url = new URL(request.url);
        // The host too: Deno.serve takes it from Host, or from an absolute-form target.
        target = url.host + url.pathname + url.search;
      } catch {
        target = "<unparsable URL>";
      }
      const echo: Echo = {
        method: request.method,
        target,
        // The front's own additions are compared on their own: its address, and the close it
        // asks for on the last request before one it refuses.
        headers: [...request.headers].filter(([name]) =>
          name !== PEER_HEADER && name !== "connection"
        ),
        peers: request.headers.get(PEER_HEADER)?.split(", ") ?? [],
        body: "",
      };
      seen.push(echo);
      try {
        echo.body = latin1.decode(await request.arrayBuffer());
      } catch {
        echo.body = UNREADABLE;
      } finally {
        inFlight--;
      }
      return new Response("ok");
    },
  );
  await listening.promise;
  const front = TcpFront.listen({
    hostname: "127.0.0.1",
    port: 0,
    upstream: path,
    limits: {
      maxConnections: 100,
      headerTimeoutMs: 10_000,
      bodyTimeoutMs: 10_000,
      idleTimeoutMs: 10_000,
      sendTimeoutMs: 10_000,
    },
    logger: createLogger("error", () => {}),
  });
  return {
    async send(pieces, through) {
      seen = [];
      const conn = through === "front"
        ? await Deno.connect({ hostname: "127.0.0.1", port: front.addr.port })
        : await Deno.connect({ transport: "unix", path });
      try {
        for (const [i, piece] of pieces.entries()) {
          // A pause between pieces, so that the front does get them as separate reads.
          if (i > 0) await new Promise((resolve) => setTimeout(resolve, 1));
          await conn.write(piece).catch(() => {});
        }
        await readUntilQuiet(conn);
      } finally {
        try {
          conn.close();
        } catch { /* closed by the other side */ }
      }
      // A handler still reading a body ends once its connection has gone.
      await waitUntil("the echo server's handlers to end", () => inFlight === 0);
      return seen;
    },
    async close() {
      await front.stopAccepting();
      front.closeAll();
      await within("the echo server to shut down", server.shutdown());
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Reads until the other side closes, or nothing has come for a while (it waits for more). */
async function readUntilQuiet(conn: Deno.Conn): Promise<void> {
  const buffer = new Uint8Array(16 * 1024);
  for (;;) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const quiet = new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), 300));
    const n = await Promise.race([conn.read(buffer).catch(() => null), quiet]);
    clearTimeout(timer);
    if (n === null) return;
  }
}

/**
 * Compares what the server read of one case each way; a description of the difference, or
 * undefined when the front let through only what the server read the same way.
 *
 * Either side may stop early: the front when it refuses, the server when it refuses. (Straight
 * to hyper, two empty lines that arrive before a request line make it answer 400, whether
 * they arrive alone in a read decides; the front drops such lines, so it may go further.) So
 * the requests both read must be the same, one for one, and every request read through the
 * front must carry the front's address alone, and no body may hold a line the front added.
 */
export function compareRuns(direct: Echo[], front: Echo[]): string | undefined {
  for (const [i, echo] of front.entries()) {
    if (echo.peers.length !== 1 || echo.peers[0] !== "127.0.0.1") {
      return `request ${i} reached the server with the client addresses ${
        JSON.stringify(echo.peers)
      }`;
    }
    if (echo.body.includes(`${PEER_HEADER}: 127.0.0.1`)) {
      return `request ${i} reached the server with the front's line in its body: ${
        JSON.stringify(echo)
      }`;
    }
    const other = direct[i];
    if (other === undefined) continue;
    // A connection closed by a refusal cuts short the body being read on it.
    const cut = (i === front.length - 1 && echo.body === UNREADABLE) ||
      (i === direct.length - 1 && other.body === UNREADABLE);
    if (!sameEcho(echo, other, !cut)) {
      return `request ${i} through the front was ${JSON.stringify(echo)}, straight to the server ${
        JSON.stringify(other)
      }`;
    }
  }
  return undefined;
}

const UNREADABLE = "<unreadable>";

function sameEcho(a: Echo, b: Echo, bodies: boolean): boolean {
  return a.method === b.method && a.target === b.target && (!bodies || a.body === b.body) &&
    JSON.stringify(a.headers) === JSON.stringify(b.headers);
}

/** A request with a forged client address, sent as another request's body. */
const SMUGGLED = `GET /smuggled HTTP/1.1\r\nHost: x\r\n${PEER_HEADER}: 10.6.6.6\r\n\r\n`;

const LINE_ENDS = ["\r\n", "\r\n", "\r\n", "\r\n", "\r\n", "\n", "\r", "\r\r\n", "\n\r", " \r\n"];
const HEADERS = [
  "X-A: 1",
  "x-b:\tvalue with spaces ",
  "Content-Length: 3",
  "content-length: 0",
  "Content-Length: 3, 3",
  "Content-Length: 5",
  "Transfer-Encoding: chunked",
  "transfer-encoding: gzip, chunked",
  `${PEER_HEADER}: 10.9.8.7`,
  `X-Gatehouse-Peer : 10.9.8.7`,
  " folded",
  "Content\rLength: 3",
  "Connection: keep-alive",
  "NoColon",
  "X-C: a\0b",
  // A body that is a whole request with a forged address (SMUGGLED), for heads whose body a
  // server might not read as one: CONNECT, upgrades, 100-continue.
  `Content-Length: ${SMUGGLED.length}`,
  "Upgrade: websocket",
  "Connection: Upgrade",
  "Upgrade: h2c",
  "Expect: 100-continue",
  "Transfer-Encoding: chunked\u00a0",
  "X-O: caf\u00e9",
  "Content-Length\0: 3",
  "Transfer-Encoding\t: chunked",
  "Content-Length: 03",
  "X-\u00e9: 1",
  `${PEER_HEADER}\0: 10.9.8.7`,
  `${PEER_HEADER}\t: 10.9.8.7`,
  "Transfer-Encoding: chunked, chunked",
  // A second Host, or one that is no host: refused by the front.
  "Host: x",
  "Host: a b",
  "Host: x/y",
];
/** Odd Hosts (RFC 9112 §3.2): what the front lets through must read as one Host to the server. */
const HOSTS = [
  "Host: x",
  "Host: [::1]:8080",
  "Host: [::1",
  "Host: ::1",
  "Host: example.com.",
  "Host: EXAMPLE.com:443",
  "Host:",
  "Host: x:",
  "Host: x:99999",
  "Host: a:b:c",
  "Host: %41%2f",
  "Host: a@b",
  "HOST: x",
  "host:x",
  "Host : x",
  " Host: x",
  "Host\0: x",
  "Host: x\0",
  "Host: [v1.x]",
];
const REQUEST_LINES = [
  "GET /a HTTP/1.1",
  "POST /b?x=1 HTTP/1.1",
  "PUT /c HTTP/1.1",
  "GET /d HTTP/1.0",
  "GET  /e HTTP/1.1",
  "GET /f",
  "CONNECT x:443 HTTP/1.1",
  "CONNECT /c HTTP/1.1",
  "OPTIONS * HTTP/1.1",
  "HEAD /h HTTP/1.1",
  "PRI * HTTP/2.0",
  // Absolute form, naming a host other than Host's.
  "GET http://other.example/abs HTTP/1.1",
  "GET http://[::1]:81/abs?q HTTP/1.1",
  "GET https://u@other.example/ HTTP/1.1",
  "GET /g HTTP/1.0",
];
/** Headers that may change whether a server reads a request's body as one. */
const BODY_DOUBTS = [
  "Upgrade: websocket",
  "Connection: Upgrade",
  "Upgrade: h2c",
  "Expect: 100-continue",
  "Connection: close",
];

/**
 * A request whose body is a whole request with a forged address, under a head a server may
 * read without a body (CONNECT, an upgrade, 100-continue): if the server does not read it as a
 * body, it reads it as a request the front never checked.
 */
function bodyProbe(random: Random): string {
  let text = random.pick(REQUEST_LINES) + "\r\nHost: x\r\n";
  for (let i = random.int(3); i > 0; i--) text += random.pick(BODY_DOUBTS) + "\r\n";
  if (random.chance(0.5)) return text + `Content-Length: ${SMUGGLED.length}\r\n\r\n${SMUGGLED}`;
  const size = SMUGGLED.length.toString(16);
  return text + `Transfer-Encoding: chunked\r\n\r\n${size}\r\n${SMUGGLED}\r\n0\r\n\r\n`;
}

/** One request: empty lines, request line, header lines, the end, a body of some kind. */
function request(random: Random): string {
  if (random.chance(0.1)) return bodyProbe(random);
  const end = () => random.chance(0.9) ? "\r\n" : random.pick(LINE_ENDS);
  let text = "";
  for (let i = random.chance(0.2) ? random.int(7) : 0; i > 0; i--) text += end();
  text +=
    (random.chance(0.9) ? random.pick(REQUEST_LINES.slice(0, 3)) : random.pick(REQUEST_LINES)) +
    end();
  // Mostly with its Host (an HTTP/1.1 request without one is refused); HEADERS may add another.
  if (random.chance(0.9)) text += (random.chance(0.8) ? "Host: x" : random.pick(HOSTS)) + end();
  for (let i = random.int(5); i > 0; i--) {
    text += (random.chance(0.6) ? random.pick(HEADERS.slice(0, 8)) : random.pick(HEADERS)) + end();
  }
  text += end();
  if (/transfer-encoding/i.test(text) && random.chance(0.8)) return text + chunkedBody(random, end);
  if (text.includes(`Content-Length: ${SMUGGLED.length}`) && random.chance(0.8)) {
    return text + SMUGGLED;
  }
  // Mostly the body its head declares, sometimes one shorter or longer than that.
  const declared = /content-length: (\d)\r\n/i.exec(text);
  if (declared && random.chance(0.8)) return text + "abcdefgh".slice(0, Number(declared[1]));
  return text + random.pick(["", "abc", "hello", "ab", "abcdefgh"]);
}

function chunkedBody(random: Random, end: () => string): string {
  let body = "";
  for (let i = random.int(3); i > 0; i--) {
    const data = random.pick(["ab", "hello", "x", SMUGGLED]);
    body += data.length.toString(16) + (random.chance(0.2) ? ";ext=1" : "") + end() + data + end();
  }
  body += "0" + end();
  for (let i = random.chance(0.3) ? random.int(3) : 0; i > 0; i--) body += "X-T: 1" + end();
  return body + end();
}

/** A case: one to three requests back to back, then one that closes; sent in one or more pieces. */
export function headCase(random: Random): Uint8Array[] {
  let text = "";
  for (let i = 1 + random.int(3); i > 0; i--) text += request(random);
  text += "GET /last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  const bytes = encoder.encode(text);
  if (random.chance(0.7)) return [bytes];
  const pieces: Uint8Array[] = [];
  for (let at = 0; at < bytes.length;) {
    const size = 1 + random.int(12);
    pieces.push(bytes.subarray(at, at + size));
    at += size;
  }
  return pieces;
}

export interface HeadFuzzReport {
  cases: number;
  /** Cases whose every request the front let through, and cases it stopped part way or at once. */
  whole: number;
  refused: number;
  failures: string[];
}

/** Runs `count` generated cases on a few targets side by side; every difference, replayable. */
export async function runHeadFuzz(seed: number, count: number): Promise<HeadFuzzReport> {
  const report: HeadFuzzReport = { cases: count, whole: 0, refused: 0, failures: [] };
  const random = new Random(seed);
  const cases = Array.from({ length: count }, () => headCase(random));
  let next = 0;
  const worker = async (target: HeadTarget) => {
    while (next < cases.length) {
      const index = next++;
      const pieces = cases[index];
      const direct = await target.send(pieces, "direct");
      const front = await target.send(pieces, "front");
      if (front.at(-1)?.target.endsWith("/last")) report.whole++;
      else report.refused++;
      const difference = compareRuns(direct, front);
      if (difference) {
        const bytes = latin1.decode(concat(pieces));
        report.failures.push(`seed ${seed} case ${index} ${JSON.stringify(bytes)}: ${difference}`);
      }
    }
  };
  const targets = await Promise.all(Array.from({ length: 8 }, startHeadTarget));
  try {
    await Promise.all(targets.map(worker));
  } finally {
    await Promise.all(targets.map((target) => target.close()));
  }
  return report;
}

function concat(pieces: Uint8Array[]): Uint8Array {
  const all = new Uint8Array(pieces.reduce((sum, piece) => sum + piece.length, 0));
  let at = 0;
  for (const piece of pieces) all.set(piece, (at += piece.length) - piece.length);
  return all;
}
