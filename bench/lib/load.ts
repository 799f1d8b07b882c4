/**
 * MCP load over the bench's HTTP client: open a session, then send `calls` requests from
 * `concurrency` workers (one kept-alive connection each, all in that one session), and report
 * calls/s, p50 and p99, and the CPU time the watched processes spent per call.
 */
import { HttpConnection, type Reply, rpcOf } from "./http_client.ts";
import { cpuSpent, readCpu } from "./processes.ts";

export const MCP_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

export interface Endpoint {
  /** Full URL of the MCP endpoint. */
  url: string;
  headers?: Record<string, string>;
}

export interface LoadResult {
  calls: number;
  rate: number;
  p50: number;
  p99: number;
  /** CPU µs per call of each watched process, by name. */
  cpuPerCall: Record<string, number>;
}

let nextId = 1;

export function request(method: string, params: unknown = {}): string {
  return JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params });
}

/** Sends `initialize` and `notifications/initialized`; returns the session id (if any). */
export async function openSession(
  endpoint: Endpoint,
  connection?: HttpConnection,
): Promise<string | undefined> {
  const conn = connection ?? await HttpConnection.open(endpoint.url);
  const path = new URL(endpoint.url).pathname;
  const headers = { ...MCP_HEADERS, ...endpoint.headers };
  try {
    const init = await conn.request(
      "POST",
      path,
      headers,
      request("initialize", {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "gatehouse-bench", version: "1.0.0" },
      }),
    );
    if (init.status !== 200 || !rpcOf(init)?.result) {
      throw new Error(`initialize at ${endpoint.url} failed: ${init.status} ${init.body}`);
    }
    const session = init.headers.get("mcp-session-id");
    const withSession = session ? { ...headers, "mcp-session-id": session } : headers;
    const notified = await conn.request(
      "POST",
      path,
      withSession,
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    );
    if (notified.status !== 202) throw new Error(`initialized: ${notified.status}`);
    return session;
  } finally {
    if (!connection) conn.close();
  }
}

/** Fails loudly unless the answer carries a JSON-RPC result: a bench of errors measures nothing. */
export function expectResult(reply: Reply, what: string): Record<string, unknown> {
  const message = rpcOf(reply);
  if (reply.status !== 200 || !message?.result) {
    throw new Error(`${what}: ${reply.status} ${reply.body.slice(0, 300)}`);
  }
  return message.result as Record<string, unknown>;
}

/**
 * Runs `calls` requests (`body()` makes each) against an open session. `watch` names the
 * processes whose CPU is charged to the calls.
 */
export async function runLoad(options: {
  endpoint: Endpoint;
  session?: string;
  body: () => string;
  calls: number;
  concurrency: number;
  watch?: Record<string, number>;
  check?: (reply: Reply) => void;
}): Promise<LoadResult> {
  const { endpoint, calls, concurrency } = options;
  const path = new URL(endpoint.url).pathname;
  const headers: Record<string, string> = { ...MCP_HEADERS, ...endpoint.headers };
  if (options.session) headers["mcp-session-id"] = options.session;
  const connections = await Promise.all(
    Array.from({ length: concurrency }, () => HttpConnection.open(endpoint.url)),
  );
  const check = options.check ?? ((reply: Reply) => expectResult(reply, endpoint.url));
  // Warm up (JIT, connection pools) before measuring: the first scenario must not pay for it.
  const warmUp = Math.ceil(Math.max(500, calls / 5) / concurrency);
  await Promise.all(connections.map(async (conn) => {
    for (let i = 0; i < warmUp; i++) {
      check(await conn.request("POST", path, headers, options.body()));
    }
  }));
  const watch = options.watch ?? {};
  const cpuBefore = Object.fromEntries(
    Object.entries(watch).map(([k, pid]) => [k, readCpu(pid)]),
  );
  const latencies = new Float64Array(calls);
  let issued = 0;
  const started = performance.now();
  await Promise.all(connections.map(async (conn) => {
    while (issued < calls) {
      const index = issued++;
      const t0 = performance.now();
      const reply = await conn.request("POST", path, headers, options.body());
      latencies[index] = performance.now() - t0;
      check(reply);
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  const cpuPerCall = Object.fromEntries(
    Object.entries(watch).map(([k, pid]) => [k, cpuSpent(cpuBefore[k], readCpu(pid)) / calls]),
  );
  for (const conn of connections) conn.close();
  latencies.sort();
  const at = (q: number) => latencies[Math.min(calls - 1, Math.floor(q * calls))];
  return { calls, rate: calls / seconds, p50: at(0.5), p99: at(0.99), cpuPerCall };
}

/**
 * The median of each figure over several results. Runs to compare are interleaved and their
 * medians taken: on shared cores one run can be a fifth off the next.
 */
export function medianOf(results: LoadResult[]): LoadResult {
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
  };
  const names = Object.keys(results[0].cpuPerCall);
  return {
    calls: results[0].calls,
    rate: median(results.map((r) => r.rate)),
    p50: median(results.map((r) => r.p50)),
    p99: median(results.map((r) => r.p99)),
    cpuPerCall: Object.fromEntries(
      names.map((n) => [n, median(results.map((r) => r.cpuPerCall[n]))]),
    ),
  };
}
