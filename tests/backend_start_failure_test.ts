/**
 * A stdio backend that exits before answering `initialize` (a program that cannot start: a
 * missing module, a bad flag) is said the same way in every share mode and both revisions:
 * it exited before answering initialize, and its last stderr output is in the gateway's log,
 * on the warn line the message names, with the terminal's colours taken out.
 */
import assert from "node:assert/strict";
import { startGateway } from "./fixtures/gateway.ts";
import { INIT, post } from "./fixtures/raw.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const ROOT = new URL("../", import.meta.url).pathname;

const MODERN_LIST = {
  jsonrpc: "2.0",
  id: 1,
  method: "tools/list",
  params: {
    _meta: {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {},
      "io.modelcontextprotocol/clientInfo": { name: "modern", version: "1" },
    },
  },
};

Deno.test("a stdio backend that exits before initialize: the same words in every share mode, pointing at its stderr in the log", async () => {
  const server = (share: string) => `
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, "${ROOT}tests/fixtures/bad_backend.ts", stderr-then-exit]
    public: true
    share: ${share}`;
  const gw = await startGateway(`
servers:
  own: ${server("session")}
  mine: ${server("person")}
  ours: ${server("all")}
`);
  try {
    for (const name of ["own", "mine", "ours"]) {
      const modern = await post(`${gw.url}/${name}/mcp`, MODERN_LIST, {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/list",
      });
      for (const answer of [await post(`${gw.url}/${name}/mcp`, INIT), modern]) {
        assert.equal(answer.status, 502, answer.text);
        const message = (answer.json as { error: { message: string } }).error.message;
        const said = new RegExp(
          `^The backend "${name}" could not start: backend process exited with code 1 before answering initialize; its last stderr output is in the gateway's log \\("backend process exited", pid (\\d+)\\)$`,
        ).exec(message);
        assert.ok(said, message);
        const line = gw.logs.map((text) => JSON.parse(text)).find((entry) =>
          entry.msg === "backend process exited" && entry.pid === Number(said[1])
        );
        assert.ok(line, `the log has the line the message names (pid ${said[1]})`);
        assert.equal(line.level, "warn");
        assert.equal(line.server, name);
        assert.deepEqual(line.lastStderr, ['error: Module not found "file:///srv/missing.ts"']);
      }
    }
    const painted = gw.logs.filter((text) => text.includes("\\u001b"));
    assert.deepEqual(painted, [], "no terminal escapes in the log");
  } finally {
    await gw.close();
  }
});
