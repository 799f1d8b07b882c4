/**
 * More of the fault matrix: a stdio backend that exits at start, writes half a line, floods its
 * output, or closes stdout but keeps running; an HTTP backend that refuses connections or resets
 * them. Each fails its own session with a clear error within its timeout, leaves no process
 * behind, and the gateway keeps serving.
 */
import assert from "node:assert/strict";
import { startGateway } from "./fixtures/gateway.ts";
import { refusedPort } from "./fixtures/ports.ts";
import { INIT, mcpHeaders, post } from "./fixtures/raw.ts";
import { waitUntil } from "./fixtures/waits.ts";

const ROOT = new URL("../", import.meta.url).pathname;

function isAlive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(Deno.readTextFileSync(`/proc/${pid}/stat`));
  } catch {
    return false;
  }
}

const bad = (mode: string) => `
    transport: stdio
    command: deno
    args: [run, "${ROOT}tests/fixtures/bad_backend.ts", ${mode}]
    public: true`;

Deno.test("fault matrix: stdio exit at start, half a line, flood, closed stdout; HTTP refused and reset", async (t) => {
  // An HTTP "backend" that accepts connections and drops them at once.
  const resetter = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const resetting = (async () => {
    for await (const connection of resetter) connection.close();
  })();
  // A port nothing listens on, nor can come to: connections to it are refused.
  const closedPort = await refusedPort();
  const gw = await startGateway(`
limits: { requestTimeout: 10s, maxMessageBytes: 256KiB }
servers:
  exits: ${bad("exit-at-start")}
  halfline: ${bad("half-line")}
  flood: ${bad("flood")}
  closes: ${bad("close-stdout")}
  refused:
    transport: streamable-http
    url: http://127.0.0.1:${closedPort}/mcp
    public: true
  reset:
    transport: streamable-http
    url: http://127.0.0.1:${(resetter.addr as Deno.NetAddr).port}/mcp
    public: true
  fine: ${bad("none")}
`);
  /** initialize, then tools/call on the same session; returns the call's answer and the pid. */
  const callAfterInit = async (server: string) => {
    const init = await post(`${gw.url}/${server}/mcp`, INIT);
    assert.equal(init.status, 200, init.text);
    const name = (init.json as { result: { serverInfo: { name: string } } }).result.serverInfo.name;
    const session = init.headers.get("mcp-session-id")!;
    const call = await post(
      `${gw.url}/${server}/mcp`,
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "x", arguments: {} } },
      mcpHeaders({ "mcp-session-id": session }),
    );
    return { call, pid: Number(name.slice(4)) };
  };
  try {
    await t.step("a stdio backend that exits at start", async () => {
      const before = gw.gateway.sessions.size;
      const init = await post(`${gw.url}/exits/mcp`, INIT);
      assert.match(
        init.text,
        /"code":-32000,"message":"backend process exited with code 1 before answering initialize"/,
      );
      await waitUntil("the failed sessions to be gone", () => gw.gateway.sessions.size === before);
    });
    await t.step(
      "half a line, then silence: the request times out within its limit",
      async () => {
        // The gateway's own timeout answered (the test's client has none).
        const { call } = await callAfterInit("halfline");
        assert.match(call.text, /did not answer tools\/call within 10s/);
      },
    );
    await t.step("a flood past maxMessageBytes ends that session and its process", async () => {
      const { call, pid } = await callAfterInit("flood");
      assert.match(call.text, /262144|256 ?KiB|larger than|too large|maxMessageBytes/i);
      await waitUntil(`backend process ${pid} to exit`, () => !isAlive(pid));
    });
    await t.step(
      "stdout closed but the process keeps running: the session ends, the process is killed",
      async () => {
        const { call, pid } = await callAfterInit("closes");
        assert.match(call.text, /closed|exited|ended/);
        await waitUntil(`backend process ${pid} to exit`, () => !isAlive(pid));
      },
    );
    await t.step(
      "HTTP backends that refuse or reset connections: initialize fails at once, no session stays",
      async () => {
        const before = gw.gateway.sessions.size;
        for (const server of ["refused", "reset"]) {
          // "could not reach", not the 10 s timeout: the failure was seen at once.
          const init = await post(`${gw.url}/${server}/mcp`, INIT);
          assert.match(
            init.text,
            /"error":\{"code":-32000,"message":"could not reach the backend: /,
          );
          const session = init.headers.get("mcp-session-id");
          if (session) {
            const after = await post(
              `${gw.url}/${server}/mcp`,
              { jsonrpc: "2.0", id: 2, method: "ping" },
              mcpHeaders({ "mcp-session-id": session }),
            );
            assert.equal(after.status, 404);
          }
        }
        await waitUntil(
          "the failed sessions to be gone",
          () => gw.gateway.sessions.size === before,
        );
      },
    );
    await t.step("the gateway keeps serving", async () => {
      const init = await post(`${gw.url}/fine/mcp`, INIT);
      assert.equal(init.status, 200);
      await fetch(`${gw.url}/fine/mcp`, {
        method: "DELETE",
        headers: mcpHeaders({ "mcp-session-id": init.headers.get("mcp-session-id")! }),
      }).then((r) => r.body?.cancel());
    });
  } finally {
    await gw.close();
    resetter.close();
    await resetting.catch(() => {});
  }
});
