/**
 * More of the fault matrix: a stdio backend that exits at start, writes half a line, floods its
 * output, or closes stdout but keeps running; an HTTP backend that refuses connections or resets
 * them. Each fails its own session with a clear error within its timeout, leaves no process
 * behind, and the gateway keeps serving.
 */
import assert from "node:assert/strict";
import { startGateway } from "./fixtures/gateway.ts";
import { refusedPort } from "./fixtures/ports.ts";
import { INIT, mcpHeaders, openSession, post } from "./fixtures/raw.ts";
import { waitUntil, within } from "./fixtures/waits.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const ROOT = new URL("../", import.meta.url).pathname;

function isAlive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(Deno.readTextFileSync(`/proc/${pid}/stat`));
  } catch {
    return false;
  }
}

/** This test process's live (not zombie) children running bad_backend.ts in `mode`. */
function backendsRunning(mode: string): number[] {
  const pids: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      const [, state, parent] = /\) (\S) (\d+) /.exec(stat) ?? [];
      if (Number(parent) !== Deno.pid || state === "Z") continue;
      const args = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).split("\0");
      if (args.some((arg) => arg.endsWith("bad_backend.ts")) && args.includes(mode)) {
        pids.push(Number(entry.name));
      }
    } catch { /* exited meanwhile */ }
  }
  return pids;
}

const bad = (mode: string) => `
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
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
    await t.step("a stdio backend that exits at start: 502 and no session", async () => {
      const before = gw.gateway.sessions.size;
      const init = await post(`${gw.url}/exits/mcp`, INIT);
      assert.equal(init.status, 502, init.text);
      assert.deepEqual(init.json, {
        jsonrpc: "2.0",
        id: 1,
        error: {
          code: -32000,
          message:
            'The backend "exits" could not start: backend process exited with code 1 before answering initialize',
        },
      });
      assert.equal(init.headers.get("mcp-session-id"), null);
      assert.equal(gw.gateway.sessions.size, before);
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
      "HTTP backends that refuse or reset connections: initialize gets 502 naming why, and no session",
      async () => {
        const before = gw.gateway.sessions.size;
        for (const server of ["refused", "reset"]) {
          for (const accept of ["application/json, text/event-stream", "application/json"]) {
            const where = `${server}, Accept: ${accept}`;
            const init = await post(`${gw.url}/${server}/mcp`, INIT, mcpHeaders({ accept }));
            assert.equal(init.status, 502, `${where}: ${init.text}`);
            assert.equal(init.headers.get("content-type"), "application/json", where);
            const answer = init.json as { id: number; error: { code: number; message: string } };
            assert.equal(answer.id, 1, where);
            assert.equal(answer.error.code, -32000, where);
            // "could not reach", not the 10 s timeout: the failure was seen at once.
            assert.match(
              answer.error.message,
              new RegExp(`^The backend "${server}" could not start: could not reach the backend: `),
              where,
            );
            assert.equal(init.headers.get("mcp-session-id"), null, where);
            assert.equal(gw.gateway.sessions.size, before, where);
          }
        }
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

Deno.test("a stdio backend that ignores SIGTERM holds its session's place until SIGKILL: never more processes than limits.sessionsPerUser", async () => {
  const limit = 2;
  const rounds = 8;
  // The kill grace is the shutdown grace, at most 2 s: 1 s here.
  const gw = await startGateway(`
shutdownGrace: 1s
limits: { sessionsPerUser: ${limit}, requestTimeout: 10s }
servers:
  stubborn: ${bad("ignore-sigterm")}
`);
  const url = `${gw.url}/stubborn/mcp`;
  let most = 0;
  const count = () => most = Math.max(most, backendsRunning("ignore-sigterm").length);
  const deletes: Promise<number>[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      const session = await openSession(url);
      count();
      // The client does not wait for its DELETE before it opens the next session.
      deletes.push(
        fetch(url, { method: "DELETE", headers: mcpHeaders({ "mcp-session-id": session }) })
          .then(async (response) => {
            await response.body?.cancel();
            return response.status;
          }),
      );
      count();
    }
    const statuses = await within("every DELETE to be answered", Promise.all(deletes));
    // 404 when the next initialize got there first and ended the session to make room.
    assert.ok(statuses.every((status) => status === 204 || status === 404), String(statuses));
    count();
    assert.ok(
      most <= limit,
      `${most} backend processes ran at once for one person with limits.sessionsPerUser ${limit}`,
    );
    await waitUntil(
      "every backend process to be killed",
      () => backendsRunning("ignore-sigterm").length === 0,
    );
    assert.equal(gw.gateway.sessions.placesHeld, 0);
  } finally {
    await gw.close();
  }
});

Deno.test("a backend that never answers initialize: 502 naming the timeout, and no session", async () => {
  // `sleep` reads nothing and writes nothing: initialize waits out limits.requestTimeout, longer
  // than the second after which an answer would otherwise turn into an SSE stream.
  const gw = await startGateway(`
limits: { requestTimeout: 2s }
servers:
  silent: { transport: stdio, command: sleep, args: ["600"], public: true }
`);
  try {
    const init = await post(`${gw.url}/silent/mcp`, INIT);
    assert.equal(init.status, 502, init.text);
    assert.deepEqual(init.json, {
      jsonrpc: "2.0",
      id: 1,
      error: {
        code: -32000,
        message:
          'The backend "silent" could not start: the backend did not answer initialize within 2s (limits.requestTimeout)',
      },
    });
    assert.equal(init.headers.get("mcp-session-id"), null);
    assert.equal(gw.gateway.sessions.size, 0);
    await waitUntil(
      "the backend process to be stopped",
      () => gw.gateway.sessions.placesHeld === 0,
    );
  } finally {
    await gw.close();
  }
});

Deno.test("a backend that refuses initialize: its error passes on as it wrote it, with no session id", async () => {
  const gw = await startGateway(`
servers:
  refuses: ${bad("refuse-init")}
`);
  try {
    const init = await post(`${gw.url}/refuses/mcp`, INIT);
    assert.equal(init.status, 200, init.text);
    assert.deepEqual(init.json, {
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32602, message: "this server speaks no version the client offers" },
    });
    assert.equal(init.headers.get("mcp-session-id"), null);
    assert.equal(gw.gateway.sessions.size, 0);
  } finally {
    await gw.close();
  }
});
