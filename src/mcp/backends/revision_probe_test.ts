import assert from "node:assert/strict";
import type { BackendServerConfig } from "../../config/types.ts";
import type { ServerName } from "../../core/ids.ts";
import { StreamableHTTPError } from "../../sdk.ts";
import type { RpcResponse } from "../protocol/jsonrpc.ts";
import {
  httpRefusal,
  type ProbeOutcome,
  refusalMessage,
  revisionKey,
  RevisionMemory,
  verdictOf,
} from "./revision_probe.ts";

const DISCOVER = {
  resultType: "complete",
  supportedVersions: ["2026-07-28"],
  capabilities: { tools: {} },
};
const answer = (response: Omit<RpcResponse, "jsonrpc" | "id">, status?: number): ProbeOutcome => ({
  answer: { response: { jsonrpc: "2.0", id: "p", ...response }, status },
});
const failure = (message: string, status?: number): ProbeOutcome => ({
  failure: Object.assign(new Error(message), { status }),
});

/** Each row: what came of asking server/discover, on stdio and over HTTP, and the verdicts. */
const ROWS: {
  name: string;
  outcome: ProbeOutcome;
  stdio: string | undefined;
  http: string | undefined;
}[] = [
  {
    name: "a discover result offering 2026-07-28",
    outcome: answer({ result: DISCOVER }, 200),
    stdio: "2026-07-28",
    http: "2026-07-28",
  },
  {
    name: "a discover result offering only other revisions",
    outcome: answer({ result: { ...DISCOVER, supportedVersions: ["2027-01-01"] } }),
    stdio: "2025-11-25",
    http: "2025-11-25",
  },
  {
    name: "method not found (a 2025 server)",
    outcome: answer({ error: { code: -32601, message: "Method not found" } }),
    stdio: "2025-11-25",
    http: "2025-11-25",
  },
  {
    name: "HTTP 400 Server not initialized (a 2025 SDK server)",
    outcome: answer(
      { error: { code: -32000, message: "Bad Request: Server not initialized" } },
      400,
    ),
    stdio: "2025-11-25",
    http: "2025-11-25",
  },
  {
    name: "HTTP 404 with a body that is not JSON-RPC",
    outcome: failure("the backend answered HTTP 404 without a JSON-RPC response", 404),
    stdio: "2025-11-25",
    http: "2025-11-25",
  },
  {
    name: "HTTP 401 (an authorization problem, not a revision)",
    outcome: failure("the backend refused the gateway's credentials (HTTP 401)", 401),
    stdio: "2025-11-25",
    http: undefined,
  },
  {
    name: "HTTP 503 with a JSON-RPC error",
    outcome: answer({ error: { code: -32000, message: "overloaded" } }, 503),
    stdio: undefined,
    http: undefined,
  },
  {
    name: "a connection that failed or ended",
    outcome: failure("backend process exited with code 1"),
    stdio: "2025-11-25",
    http: undefined,
  },
  {
    name: "silence",
    outcome: { silentMs: 5_000 },
    stdio: "2025-11-25",
    http: undefined,
  },
];

for (const row of ROWS) {
  Deno.test(`verdictOf() judges ${row.name}`, () => {
    // A status is only ever seen over HTTP: the stdio column of those rows is not asked.
    const overHttpOnly = "answer" in row.outcome && row.outcome.answer.status !== undefined ||
      "failure" in row.outcome && row.outcome.failure.status !== undefined;
    if (!overHttpOnly) assert.equal(verdictOf("stdio", row.outcome).revision, row.stdio, "stdio");
    assert.equal(verdictOf("http", row.outcome).revision, row.http, "http");
  });
}

Deno.test("verdictOf() says why, and keeps the discover answer of a 2026 backend", () => {
  const modern = verdictOf("http", answer({ result: DISCOVER }, 200));
  assert.deepEqual(modern, { revision: "2026-07-28", version: "2026-07-28", discover: DISCOVER });
  assert.deepEqual(verdictOf("stdio", { silentMs: 5_000 }), {
    revision: "2025-11-25",
    why: "it did not answer server/discover within 5s",
    silent: true,
  });
  const refused = verdictOf(
    "stdio",
    answer({ error: { code: -32601, message: "Method not found" } }),
  );
  assert.deepEqual(refused, {
    revision: "2025-11-25",
    why: "it answered server/discover with error -32601 (Method not found)",
  });
});

const REFUSAL = {
  code: -32022,
  message: "Unsupported protocol version: 2025-11-25",
  data: { supported: ["2026-07-28"], requested: "2025-11-25" },
};

Deno.test("refusalMessage() names the backend, what it speaks and the setting to change", () => {
  assert.equal(
    refusalMessage("notes", "2025-11-25", REFUSAL, "it refused initialize: no"),
    'the backend "notes" speaks only MCP 2026-07-28 (it refused initialize: no); its ' +
      "configuration says protocol: 2025-11-25: set protocol: auto (or 2026-07-28)",
  );
  assert.match(refusalMessage("notes", "auto", REFUSAL, "x"), /could not reach it as a 2026/);
  // A refusal that lists older revisions only is the backend's own business.
  const older = { ...REFUSAL, data: { supported: ["2024-11-05"] } };
  assert.equal(refusalMessage("notes", "auto", older, "x"), REFUSAL.message);
});

Deno.test("httpRefusal() reads the JSON-RPC error out of the SDK transport's 4xx error", () => {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, error: REFUSAL });
  const thrown = new StreamableHTTPError(400, `Error POSTing to endpoint: ${body}`);
  assert.deepEqual(httpRefusal(thrown), REFUSAL);
  assert.equal(httpRefusal(new StreamableHTTPError(502, `Error POSTing: ${body}`)), undefined);
  assert.equal(httpRefusal(new StreamableHTTPError(400, "Error POSTing: <html>")), undefined);
  assert.equal(httpRefusal(new Error(body)), undefined);
});

const server = (name: string, url: string): BackendServerConfig => ({
  name: name as ServerName,
  public: true,
  serviceAuths: [],
  forwardRoots: true,
  protocol: "auto",
  secretValues: [],
  toolChanges: "allow",
  toolChangesDefaulted: true,
  transport: "streamable-http",
  url,
  headers: {},
  identity: { headers: false, assertion: false },
});

Deno.test("revisionKey() changes with where the server is reached", () => {
  const a = revisionKey(server("a", "http://127.0.0.1:1/mcp"));
  assert.equal(a, revisionKey(server("a", "http://127.0.0.1:1/mcp")));
  assert.notEqual(a, revisionKey(server("a", "http://127.0.0.1:2/mcp")));
  assert.notEqual(a, revisionKey(server("b", "http://127.0.0.1:1/mcp")));
});

Deno.test("RevisionMemory.remember() keeps the newest verdicts within its bound", () => {
  const memory = new RevisionMemory();
  memory.remember("first", "2025-11-25");
  for (let i = 0; i < RevisionMemory.MAX_ENTRIES; i++) memory.remember(`k${i}`, "2026-07-28");
  assert.equal(memory.get("first"), undefined);
  assert.equal(memory.get(`k${RevisionMemory.MAX_ENTRIES - 1}`), "2026-07-28");
  memory.forget("k1");
  assert.equal(memory.get("k1"), undefined);
});
