import assert from "node:assert/strict";
import type { ServerName } from "../core/ids.ts";
import { parseConfigText } from "./load.ts";
import { requestTimeoutOf } from "./request_timeouts.ts";

const CONFIG = parseConfigText(
  `limits: { requestTimeout: 60s }
servers:
  plain: { transport: stdio, command: x, public: true }
  slow: { transport: stdio, command: x, public: true, requestTimeout: 5m }
  quick: { transport: stdio, command: x, public: true, requestTimeout: 5s }
  both: { transport: aggregate, servers: [plain, slow], public: true }
  fast: { transport: aggregate, servers: [plain, quick], public: true, requestTimeout: 30s }
`,
  () => undefined,
);

Deno.test("requestTimeoutOf() is a server's own requestTimeout, else limits.requestTimeout; an aggregate's its slowest member's", () => {
  const rows: [string, number, string][] = [
    ["plain", 60_000, "limits.requestTimeout"],
    ["slow", 300_000, "servers.slow.requestTimeout"],
    ["quick", 5_000, "servers.quick.requestTimeout"],
    ["both", 300_000, "servers.slow.requestTimeout"],
    ["fast", 30_000, "servers.fast.requestTimeout"],
  ];
  for (const [name, ms, setting] of rows) {
    const server = CONFIG.servers.get(name as ServerName)!;
    assert.deepEqual(
      requestTimeoutOf(server, CONFIG.limits, CONFIG.servers),
      { ms, setting },
      name,
    );
  }
});

Deno.test("parseConfigText() keeps connections.idleTimeout past the longest request timeout", () => {
  assert.equal(CONFIG.connections.idleTimeoutMs, 315_000);
});
