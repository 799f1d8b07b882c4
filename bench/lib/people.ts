/**
 * Simulated people for the "people per machine" scenario: each person holds two 2025-11-25
 * sessions, each with its GET stream open (as an editor and a CLI do), and some people are 2026
 * clients with no session; calls are paced (open loop), spread round-robin over everyone, and
 * each call's latency is kept. Also a client of the stdio server straight over its pipes, paced
 * the same, for the latency with no gateway at all.
 */
import { HttpConnection, type Reply } from "./http_client.ts";
import { expectResult, MCP_HEADERS, openSession, request } from "./load.ts";
import { sleep, terminate } from "./processes.ts";

export const MODERN = "2026-07-28";

/** A bearer token per person, as configured in the server's serviceAuths. */
export function personToken(i: number): string {
  return `person-${String(i).padStart(5, "0")}-token-0123456789abcdef`;
}

/** One way to place a call: a session's POST connection, or a 2026 client's. */
interface Caller {
  call(): Promise<Reply>;
}

/** Calls on one connection, one at a time (a fast pace may reach a caller still waiting). */
function serial(send: () => Promise<Reply>): Caller {
  let last: Promise<unknown> = Promise.resolve();
  return {
    call() {
      const reply = last.then(send, send);
      last = reply;
      return reply;
    },
  };
}

export interface People {
  callers: Caller[];
  /** Held GET streams and POST connections, closed by `close`. */
  close(): void;
}

/** Opens `count` people against `url` (two sessions with GET streams each; every `modernEvery`th person a 2026 client too). */
export async function openPeople(url: string, count: number, modernEvery: number): Promise<People> {
  const path = new URL(url).pathname;
  const open: HttpConnection[] = [];
  const callers: Caller[] = [];
  const echo = () => request("tools/call", { name: "echo", arguments: { message: "hi" } });
  for (let i = 0; i < count; i += 10) {
    const batch = Array.from({ length: Math.min(10, count - i) }, (_, j) => i + j);
    await Promise.all(batch.map(async (person) => {
      const auth = { authorization: `Bearer ${personToken(person)}` };
      for (let s = 0; s < 2; s++) {
        const conn = await HttpConnection.open(url, 8 * 1024);
        open.push(conn);
        const session = await openSession({ url, headers: auth }, conn);
        const headers = { ...MCP_HEADERS, ...auth, "mcp-session-id": session! };
        const stream = await HttpConnection.open(url, 4 * 1024);
        open.push(stream);
        const reply = await stream.openStream(path, {
          ...auth,
          accept: "text/event-stream",
          "mcp-session-id": session!,
        });
        if (reply.status !== 200) throw new Error(`GET stream: ${reply.status}`);
        callers.push(serial(() => conn.request("POST", path, headers, echo())));
      }
      if (person % modernEvery === 0) {
        const conn = await HttpConnection.open(url, 8 * 1024);
        open.push(conn);
        const headers = {
          ...MCP_HEADERS,
          ...auth,
          "mcp-protocol-version": MODERN,
          "mcp-method": "tools/call",
          "mcp-name": "echo",
        };
        const body = () =>
          JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "tools/call",
            params: {
              name: "echo",
              arguments: { message: "hi" },
              _meta: {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": { name: "bench-2026", version: "1" },
              },
            },
          });
        const modern = serial(() => conn.request("POST", path, headers, body()));
        expectResult(await modern.call(), "a 2026 client's first call");
        callers.push(modern);
      }
    }));
  }
  return { callers, close: () => open.forEach((conn) => conn.close()) };
}

/** Latencies (ms, sorted) of `calls` calls started every `1000 / rate` ms whatever answers took. */
export async function paced(
  call: (index: number) => Promise<void>,
  calls: number,
  rate: number,
): Promise<Float64Array> {
  const latencies = new Float64Array(calls);
  const started = performance.now();
  const running: Promise<void>[] = [];
  for (let i = 0; i < calls; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    running.push((async () => {
      const t0 = performance.now();
      await call(i);
      latencies[i] = performance.now() - t0;
    })());
  }
  await Promise.all(running);
  return latencies.sort();
}

export function quantile(sorted: Float64Array, q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** The stdio server itself over its pipes: newline-delimited JSON-RPC, answers matched by id. */
export async function directClient(command: string[]) {
  const child = new Deno.Command(command[0], {
    args: command.slice(1),
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const encoder = new TextEncoder();
  const waiting = new Map<number, (answer: Record<string, unknown>) => void>();
  let next = 0;
  void (async () => {
    let pending = "";
    const decoder = new TextDecoder();
    for await (const chunk of child.stdout) {
      pending += decoder.decode(chunk, { stream: true });
      for (let newline; (newline = pending.indexOf("\n")) >= 0;) {
        const answer = JSON.parse(pending.slice(0, newline));
        pending = pending.slice(newline + 1);
        waiting.get(answer.id)?.(answer);
        waiting.delete(answer.id);
      }
    }
  })();
  const ask = (method: string, params: unknown) => {
    const id = ++next;
    const answered = new Promise<Record<string, unknown>>((resolve) => waiting.set(id, resolve));
    void writer.write(
      encoder.encode(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n"),
    );
    return answered;
  };
  const init = await ask("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "gatehouse-bench", version: "1.0.0" },
  });
  if (!init.result) throw new Error(`direct initialize: ${JSON.stringify(init)}`);
  await writer.write(
    encoder.encode(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n"),
  );
  return {
    async call(): Promise<void> {
      const answer = await ask("tools/call", { name: "echo", arguments: { message: "hi" } });
      if (!answer.result) throw new Error(`direct call: ${JSON.stringify(answer)}`);
    },
    async stop(): Promise<void> {
      await writer.close().catch(() => {});
      await terminate(child, null);
    },
  };
}
