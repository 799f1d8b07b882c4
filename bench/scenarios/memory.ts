/**
 * Scenario 5: resident memory per idle open stream, 2,000 of them: GET streams on `/mcp` (of
 * sessions already open, so the stream's own cost shows), legacy `/sse` streams (each is a
 * session too), and a bare `Deno.serve` SSE server holding the same number, in the same run,
 * opened by the same client. Then the gateway's memory per active stdio session, the child
 * process excluded.
 *
 * Each figure is a difference of two readings, each taken after a settling pause and two full
 * garbage collections (through the V8 inspector: both processes run with `--inspect`), so
 * garbage left by opening the streams is not counted. Before the first reading each process
 * already holds `WARM` streams, so code compiled and buffers pooled on the first streams are
 * not charged to the 2,000. Beside the resident memory, the live JavaScript heap per stream.
 */
import { httpAndStdioServers, ROOT, startGateway } from "../lib/gateway.ts";
import { HttpConnection } from "../lib/http_client.ts";
import { expectResult, MCP_HEADERS, openSession, request } from "../lib/load.ts";
import { Inspector } from "../lib/inspector.ts";
import { freePort, rssBytes, sleep, startListening } from "../lib/processes.ts";
import type { Results } from "../lib/report.ts";

const STREAMS = 2000;
const WARM = 100;
const STDIO_WARM = 5;
const STDIO_SESSIONS = 50;
const TARGET_VS_BARE = 1.25;
const SETTLE_MS = 2000;
const KB = 1024;
const SCENARIO = "5 memory";

/** Opens `count` held GET streams, `parallel` at a time; each must answer 200 first. */
async function holdStreams(
  url: string,
  count: number,
  headersFor: (i: number) => Record<string, string>,
): Promise<HttpConnection[]> {
  const held: HttpConnection[] = [];
  const path = new URL(url).pathname;
  for (let i = 0; i < count; i += 100) {
    held.push(
      ...await Promise.all(Array.from({ length: Math.min(100, count - i) }, async (_, j) => {
        const conn = await HttpConnection.open(url, 4 * KB);
        const reply = await conn.openStream(path, headersFor(i + j));
        if (reply.status !== 200) throw new Error(`stream ${url}: ${reply.status}`);
        return conn;
      })),
    );
  }
  return held;
}

interface Reading {
  rss: number;
  /** Live JavaScript objects. */
  heap: number;
  /** ArrayBuffer contents (outside the JS heap, inside the resident memory). */
  buffers: number;
}

/** Resident memory and live JS heap of a process after a pause and a full collection. */
async function settled(pid: number, inspector: Inspector): Promise<Reading> {
  await sleep(SETTLE_MS);
  await inspector.collectGarbage();
  await sleep(200);
  const heap = await inspector.heap();
  return { rss: rssBytes(pid), heap: heap.used, buffers: heap.buffers };
}

function perItem(before: Reading, after: Reading, count: number): Reading {
  return {
    rss: (after.rss - before.rss) / count,
    heap: (after.heap - before.heap) / count,
    buffers: (after.buffers - before.buffers) / count,
  };
}

/** The parts of a stream's resident memory V8 can tell apart: live JS objects, ArrayBuffers. */
function parts(results: Results, what: string, per: Reading, bare?: Reading): void {
  results.add({
    scenario: SCENARIO,
    case: `${what}, of which JS heap`,
    value: per.heap / KB,
    unit: "KiB",
    ratio: bare && per.heap / bare.heap,
  });
  results.add({
    scenario: SCENARIO,
    case: `${what}, of which ArrayBuffers`,
    value: per.buffers / KB,
    unit: "KiB",
  });
}

export async function memory(results: Results): Promise<void> {
  const scenario = SCENARIO;
  const barePort = freePort();
  const bare = await startListening(
    ["--allow-net", Inspector.flag(barePort), `${ROOT}bench/backends/bare_sse.ts`],
    "/sse",
  );
  const bareUrl = bare.url;
  const backend = await startListening(
    ["--allow-net", `${ROOT}bench/backends/minimal_http.ts`, "0", "json"],
    "/mcp",
  );
  const backendUrl = backend.url;
  const gatewayPort = freePort();
  const gateway = await startGateway(httpAndStdioServers(backendUrl), {
    // Over 4,000 held connections: more than the cap a gateway that cannot read its
    // open-file limit sets itself (1,000), as an operator holding this many would.
    extra: "connections: { max: 10000 }\n",
    flags: [Inspector.flag(gatewayPort)],
  });
  const inspectors: Inspector[] = [];
  const open: HttpConnection[] = [];
  try {
    const bareInspector = await Inspector.attach(barePort);
    inspectors.push(bareInspector);
    const gatewayInspector = await Inspector.attach(gatewayPort);
    inspectors.push(gatewayInspector);
    const sse = () => ({ accept: "text/event-stream" });

    // The reference.
    open.push(...await holdStreams(bareUrl, WARM, sse));
    const bareBefore = await settled(bare.pid, bareInspector);
    open.push(...await holdStreams(bareUrl, STREAMS, sse));
    const bareStream = perItem(bareBefore, await settled(bare.pid, bareInspector), STREAMS);
    results.add({
      scenario,
      case: `bare Deno.serve SSE, per stream (${STREAMS})`,
      value: bareStream.rss / KB,
      unit: "KiB",
    });
    parts(results, "bare Deno.serve SSE", bareStream);

    // Streamable HTTP: sessions first, then one GET stream each.
    const mcpUrl = `${gateway.url}/http/mcp`;
    const openSessions = async (count: number) => {
      const ids: string[] = [];
      for (let i = 0; i < count; i += 50) {
        ids.push(
          ...await Promise.all(
            Array.from(
              { length: Math.min(50, count - i) },
              async () => (await openSession({ url: mcpUrl }))!,
            ),
          ),
        );
      }
      return ids;
    };
    const getStream = (ids: string[]) => (i: number) => ({
      accept: "text/event-stream",
      "mcp-session-id": ids[i],
    });
    // stdio first: sessions that have each made a call (measured after the thousands of streams
    // below, closing them would still be freeing memory under the reading). A few sessions go
    // before the first reading, as streams do, so code compiled once is not charged to them.
    const stdioUrl = `${gateway.url}/stdio/mcp`;
    const stdioSessions = async (count: number) => {
      const conns = await Promise.all(
        Array.from({ length: count }, () => HttpConnection.open(stdioUrl)),
      );
      for (const conn of conns) {
        const session = await openSession({ url: stdioUrl }, conn);
        expectResult(
          await conn.request(
            "POST",
            "/stdio/mcp",
            { ...MCP_HEADERS, "mcp-session-id": session! },
            request("tools/call", { name: "echo", arguments: {} }),
          ),
          "stdio call",
        );
      }
      return conns;
    };
    const conns = await stdioSessions(STDIO_WARM);
    const beforeStdio = await settled(gateway.pid, gatewayInspector);
    conns.push(...await stdioSessions(STDIO_SESSIONS));
    const perStdio = perItem(
      beforeStdio,
      await settled(gateway.pid, gatewayInspector),
      STDIO_SESSIONS,
    );
    results.add({
      scenario,
      case: `gateway, per active stdio session, child excluded (${STDIO_SESSIONS})`,
      value: perStdio.rss / KB,
      unit: "KiB",
    });
    for (const conn of conns) conn.close();

    const warmIds = await openSessions(WARM);
    open.push(...await holdStreams(mcpUrl, WARM, getStream(warmIds)));
    const base = await settled(gateway.pid, gatewayInspector);
    const ids = await openSessions(STREAMS);
    const withSessions = await settled(gateway.pid, gatewayInspector);
    results.add({
      scenario,
      case: `gateway, per idle /mcp session without a stream (${STREAMS})`,
      value: perItem(base, withSessions, STREAMS).rss / KB,
      unit: "KiB",
    });
    open.push(...await holdStreams(mcpUrl, STREAMS, getStream(ids)));
    const stream = perItem(withSessions, await settled(gateway.pid, gatewayInspector), STREAMS);
    results.add({
      scenario,
      case: `gateway, per idle GET stream on /mcp (${STREAMS})`,
      value: stream.rss / KB,
      unit: "KiB",
      ratio: stream.rss / bareStream.rss,
      target: `≤ ${TARGET_VS_BARE}× bare`,
      met: stream.rss <= TARGET_VS_BARE * bareStream.rss,
    });
    parts(results, "gateway, GET stream", stream, bareStream);

    // Legacy SSE: each stream is a session.
    const legacyUrl = `${gateway.url}/http/sse`;
    open.push(...await holdStreams(legacyUrl, WARM, sse));
    const beforeLegacy = await settled(gateway.pid, gatewayInspector);
    open.push(...await holdStreams(legacyUrl, STREAMS, sse));
    const legacy = perItem(beforeLegacy, await settled(gateway.pid, gatewayInspector), STREAMS);
    results.add({
      scenario,
      case: `gateway, per idle /sse stream, session included (${STREAMS})`,
      value: legacy.rss / KB,
      unit: "KiB",
      ratio: legacy.rss / bareStream.rss,
      target: `≤ ${TARGET_VS_BARE}× bare`,
      met: legacy.rss <= TARGET_VS_BARE * bareStream.rss,
    });
    for (const conn of open.splice(0)) conn.close();
  } finally {
    for (const conn of open) conn.close();
    for (const inspector of inspectors) inspector.close();
    await Promise.all([gateway.stop(), backend.stop(), bare.stop()]);
  }
}
