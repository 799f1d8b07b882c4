/**
 * Backends that crash, hang, print garbage or never start fail only their own session, with a
 * JSON-RPC error that says what happened; closed sessions leave no child process behind.
 */
import assert from "node:assert/strict";
import { connectClient } from "./fixtures/client.ts";
import { FIXTURE_STDIO, startGateway } from "./fixtures/gateway.ts";
import { INIT, mcpHeaders, openSession, post } from "./fixtures/raw.ts";
import { waitUntil } from "./fixtures/waits.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const ROOT = new URL("../", import.meta.url).pathname;

const CONFIG = `
baseUrl: http://127.0.0.1:{{PORT}}
# The hang case waits out requestTimeout; 10 s leaves a loaded machine room to start backends.
limits: { requestTimeout: 10s, sessionsPerUser: 300 }
servers:
  fx:
    transport: stdio
    ${FIXTURE_STDIO}
    public: true
  min:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts"]
    public: true
  missing:
    transport: stdio
    command: /nonexistent/mcp-server
    public: true
`;

function isAlive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}

Deno.test("faults: crash, garbage and hang each fail one session with a clear error", async (t) => {
  const gw = await startGateway(CONFIG);
  try {
    const bystander = await connectClient(gw.url, "fx", "streamable");
    await t.step("a backend killed mid-call", async () => {
      const client = await connectClient(gw.url, "fx", "streamable");
      await assert.rejects(
        client.callTool({ name: "crash" }),
        /backend process exited with code 3/,
      );
      await client.close().catch(() => {});
    });
    await t.step("a backend that prints garbage", async () => {
      const client = await connectClient(gw.url, "fx", "sse");
      await assert.rejects(
        client.callTool({ name: "garbage" }),
        /invalid JSON-RPC: "this is not json"/,
      );
      await client.close().catch(() => {});
    });
    await t.step("a backend that never answers", async () => {
      const client = await connectClient(gw.url, "fx", "streamable");
      await assert.rejects(
        client.callTool({ name: "hang" }, undefined, { timeout: 30_000 }),
        /did not answer tools\/call within 10s/,
      );
      // The session itself survives a timed-out request.
      const after = await client.callTool({ name: "test_simple_text" });
      assert.equal((after.content as { text: string }[])[0].text.length > 0, true);
      await client.close();
    });
    await t.step("a command that does not exist", async () => {
      const response = await post(`${gw.url}/missing/mcp`, INIT);
      assert.equal(response.status, 502);
      assert.match(JSON.stringify(response.json), /could not start: command not found/);
    });
    await t.step("the other session is untouched", async () => {
      const result = await bystander.callTool({ name: "test_simple_text" });
      assert.deepEqual(result.content, [{
        type: "text",
        text: "This is a simple text response for testing.",
      }]);
      await bystander.close();
    });
  } finally {
    await gw.close();
  }
});

Deno.test("a client that disconnects mid-call costs nothing but its request", async () => {
  const gw = await startGateway(CONFIG);
  try {
    const url = `${gw.url}/fx/mcp`;
    const session = await openSession(url);
    const controller = new AbortController();
    const pending = fetch(url, {
      method: "POST",
      headers: mcpHeaders({ "mcp-session-id": session }),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: { name: "sleep", arguments: { ms: 300 } },
      }),
      signal: controller.signal,
    });
    const response = await pending;
    controller.abort();
    await response.body?.cancel().catch(() => {});
    const next = await post(
      url,
      { jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "test_simple_text" } },
      mcpHeaders({ "mcp-session-id": session }),
    );
    assert.equal(next.status, 200);
    assert.match(next.text, /simple text response/);
  } finally {
    await gw.close();
  }
});

/** The process id of the minimal backend behind `session` (its `pid` tool). */
async function backendPid(url: string, session: string): Promise<number> {
  const call = await post(
    url,
    { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "pid" } },
    mcpHeaders({ "mcp-session-id": session }),
  );
  return Number((call.json as { result: { content: { text: string }[] } }).result.content[0].text);
}

Deno.test("200 sessions opened and closed leave 0 child processes behind", async () => {
  const gw = await startGateway(CONFIG);
  const pids: number[] = [];
  try {
    const url = `${gw.url}/min/mcp`;
    for (let batch = 0; batch < 20; batch++) {
      await Promise.all(Array.from({ length: 10 }, async () => {
        const session = await openSession(url);
        pids.push(await backendPid(url, session));
        const closed = await fetch(url, {
          method: "DELETE",
          headers: { "mcp-session-id": session },
        });
        assert.equal(closed.status, 204);
      }));
    }
    assert.equal(new Set(pids).size, 200, "one process per session");
    await waitUntil(
      "every session to end and every backend process to exit",
      () => gw.gateway.sessions.size === 0 && !pids.some(isAlive),
    );
  } finally {
    await gw.close();
  }
});

Deno.test("shutdown ends every session and stops every backend", async () => {
  const gw = await startGateway(CONFIG);
  const url = `${gw.url}/min/mcp`;
  const pids: number[] = [];
  let closed = false;
  try {
    for (let i = 0; i < 5; i++) {
      const session = await openSession(url);
      pids.push(await backendPid(url, session));
    }
    assert.equal(pids.filter(isAlive).length, 5);
    await gw.close();
    closed = true;
    assert.deepEqual(pids.filter(isAlive), []);
  } finally {
    if (!closed) await gw.close();
  }
});
