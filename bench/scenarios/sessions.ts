/**
 * Scenario 4: how long a new session takes to its first `tools/list` answer (a new connection,
 * initialize, initialized, tools/list), to an HTTP backend and to a stdio backend (which
 * starts a process per session), through the gateway; the HTTP backend directly for reference.
 */
import { httpAndStdioServers, ROOT, startGateway } from "../lib/gateway.ts";
import { HttpConnection } from "../lib/http_client.ts";
import { expectResult, MCP_HEADERS, openSession, request } from "../lib/load.ts";
import { startListening } from "../lib/processes.ts";
import type { Results } from "../lib/report.ts";

const SESSIONS = 30;

async function firstList(url: string): Promise<number> {
  const started = performance.now();
  const conn = await HttpConnection.open(url);
  try {
    const session = await openSession({ url }, conn);
    const headers = { ...MCP_HEADERS, ...(session && { "mcp-session-id": session }) };
    const path = new URL(url).pathname;
    expectResult(await conn.request("POST", path, headers, request("tools/list")), "tools/list");
    const took = performance.now() - started;
    if (session) await conn.request("DELETE", path, { "mcp-session-id": session });
    return took;
  } finally {
    conn.close();
  }
}

export async function sessions(results: Results): Promise<void> {
  const backend = await startListening(
    ["--allow-net", `${ROOT}bench/backends/minimal_http.ts`, "0", "json"],
    "/mcp",
  );
  const backendUrl = backend.url;
  const gateway = await startGateway(httpAndStdioServers(backendUrl));
  try {
    for (
      const [label, url] of [
        ["HTTP backend, direct", backendUrl],
        ["HTTP backend, gateway", `${gateway.url}/http/mcp`],
        ["stdio backend, gateway (process per session)", `${gateway.url}/stdio/mcp`],
      ]
    ) {
      await firstList(url); // warm
      const times: number[] = [];
      for (let i = 0; i < SESSIONS; i++) times.push(await firstList(url));
      times.sort((a, b) => a - b);
      results.add({
        scenario: "4 new session to first tools/list",
        case: label,
        p50: times[Math.floor(SESSIONS / 2)],
        p99: times[SESSIONS - 1],
      });
    }
  } finally {
    await Promise.all([gateway.stop(), backend.stop()]);
  }
}
