/**
 * Scenario 5: resident memory per idle open stream, 2,000 of them: GET streams on `/mcp` (of
 * sessions already open, so the stream's own cost shows), legacy `/sse` streams (each is a
 * session too), and a bare `Deno.serve` SSE server holding the same number, in the same run.
 * Then the gateway's memory per active stdio session, the child process excluded.
 */
import { httpAndStdioServers, ROOT, startGateway } from "../lib/gateway.ts";
import { HttpConnection } from "../lib/http_client.ts";
import { expectResult, MCP_HEADERS, openSession, request } from "../lib/load.ts";
import { rssBytes, sleep, startListening } from "../lib/processes.ts";
import type { Results } from "../lib/report.ts";

const STREAMS = 2000;
const STDIO_SESSIONS = 50;
const TARGET_VS_BARE = 1.25;
const SETTLE_MS = 2000;
const KB = 1024;

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

async function settledRss(pid: number): Promise<number> {
  await sleep(SETTLE_MS);
  return rssBytes(pid);
}

export async function memory(results: Results): Promise<void> {
  const scenario = "5 memory";
  const bare = await startListening(["--allow-net", `${ROOT}bench/backends/bare_sse.ts`], "/sse");
  const bareUrl = bare.url;
  const backend = await startListening(
    ["--allow-net", `${ROOT}bench/backends/minimal_http.ts`, "0", "json"],
    "/mcp",
  );
  const backendUrl = backend.url;
  const gateway = await startGateway(httpAndStdioServers(backendUrl));
  const open: HttpConnection[] = [];
  try {
    // The reference.
    const bareBefore = await settledRss(bare.pid);
    open.push(...await holdStreams(bareUrl, STREAMS, () => ({ accept: "text/event-stream" })));
    const barePerStream = (await settledRss(bare.pid) - bareBefore) / STREAMS;
    results.add({
      scenario,
      case: `bare Deno.serve SSE, per stream (${STREAMS})`,
      value: barePerStream / KB,
      unit: "KiB",
    });

    // Streamable HTTP: sessions first, then one GET stream each.
    const mcpUrl = `${gateway.url}/http/mcp`;
    const base = await settledRss(gateway.pid);
    const ids: string[] = [];
    for (let i = 0; i < STREAMS; i += 50) {
      ids.push(
        ...await Promise.all(
          Array.from(
            { length: Math.min(50, STREAMS - i) },
            async () => (await openSession({ url: mcpUrl }))!,
          ),
        ),
      );
    }
    const withSessions = await settledRss(gateway.pid);
    results.add({
      scenario,
      case: `gateway, per idle /mcp session without a stream (${STREAMS})`,
      value: (withSessions - base) / KB / STREAMS,
      unit: "KiB",
    });
    open.push(
      ...await holdStreams(
        mcpUrl,
        STREAMS,
        (i) => ({ accept: "text/event-stream", "mcp-session-id": ids[i] }),
      ),
    );
    const perStream = (await settledRss(gateway.pid) - withSessions) / STREAMS;
    results.add({
      scenario,
      case: `gateway, per idle GET stream on /mcp (${STREAMS})`,
      value: perStream / KB,
      unit: "KiB",
      ratio: perStream / barePerStream,
      target: `≤ ${TARGET_VS_BARE}× bare`,
      met: perStream <= TARGET_VS_BARE * barePerStream,
    });

    // Legacy SSE: each stream is a session.
    const beforeLegacy = await settledRss(gateway.pid);
    open.push(
      ...await holdStreams(
        `${gateway.url}/http/sse`,
        STREAMS,
        () => ({ accept: "text/event-stream" }),
      ),
    );
    const perLegacy = (await settledRss(gateway.pid) - beforeLegacy) / STREAMS;
    results.add({
      scenario,
      case: `gateway, per idle /sse stream, session included (${STREAMS})`,
      value: perLegacy / KB,
      unit: "KiB",
      ratio: perLegacy / barePerStream,
      target: `≤ ${TARGET_VS_BARE}× bare`,
      met: perLegacy <= TARGET_VS_BARE * barePerStream,
    });
    for (const conn of open.splice(0)) conn.close();

    // stdio: sessions that have each made a call.
    const stdioUrl = `${gateway.url}/stdio/mcp`;
    const beforeStdio = await settledRss(gateway.pid);
    const conns = await Promise.all(
      Array.from({ length: STDIO_SESSIONS }, () => HttpConnection.open(stdioUrl)),
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
    const perStdio = (await settledRss(gateway.pid) - beforeStdio) / STDIO_SESSIONS;
    results.add({
      scenario,
      case: `gateway, per active stdio session, child excluded (${STDIO_SESSIONS})`,
      value: perStdio / KB,
      unit: "KiB",
    });
    for (const conn of conns) conn.close();
  } finally {
    for (const conn of open) conn.close();
    await Promise.all([gateway.stop(), backend.stop(), bare.stop()]);
  }
}
