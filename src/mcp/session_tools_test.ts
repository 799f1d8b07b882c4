import assert from "node:assert/strict";
import type { BackendServerConfig, ServerConfig } from "../config/types.ts";
import { systemClock } from "../core/clock.ts";
import type { ServerName } from "../core/ids.ts";
import { createLogger } from "../observability/logger.ts";
import { openKvStore } from "../store/kv.ts";
import type { RpcResponse } from "./jsonrpc.ts";
import { SessionTools } from "./session_tools.ts";
import { definitionOf, digestOf } from "./tool_definitions.ts";
import { type ToolChangeReport, ToolIntegrity } from "./tool_integrity.ts";
import { ToolLedger } from "./tool_ledger.ts";

const SEARCH = { name: "search", description: "Searches", inputSchema: { type: "object" } };
const FETCH = { name: "fetch", description: "Fetches", inputSchema: { type: "object" } };

function backend(name: string, extra: Partial<BackendServerConfig> = {}): BackendServerConfig {
  return {
    name: name as ServerName,
    public: true,
    serviceAuths: [],
    transport: "stdio",
    command: "unused",
    args: [],
    env: {},
    protocol: "auto",
    forwardRoots: true,
    secretValues: [],
    toolChanges: "hold",
    toolChangesDefaulted: false,
    ...extra,
  } as BackendServerConfig;
}

async function harness(servers: ServerConfig[]) {
  const store = await openKvStore(":memory:");
  const reports: ToolChangeReport[] = [];
  const integrity = new ToolIntegrity({
    ledger: new ToolLedger(store, systemClock),
    clock: systemClock,
    servers: new Map(servers.map((server) => [server.name, server])),
    logger: createLogger("error", () => {}),
    onChange: (report) => reports.push(report),
  });
  return { store, integrity, reports };
}

const list = (tools: unknown[], ttlMs?: number): RpcResponse => ({
  jsonrpc: "2.0",
  id: 1,
  result: { tools, ...(ttlMs !== undefined && { ttlMs }) },
});

Deno.test("SessionTools.reviewList() leaves out a tool whose first digest is not its pin, and makes the list uncacheable", async () => {
  const pinned = backend("pinned", {
    toolPins: {
      search: digestOf(definitionOf(SEARCH, "search")),
      fetch: "0".repeat(64),
    },
  });
  const h = await harness([pinned]);
  try {
    const tools = new SessionTools(h.integrity, pinned);
    const reviewed = await tools.reviewList(list([SEARCH, FETCH], 3_600_000));
    assert.deepEqual(reviewed.result, { tools: [SEARCH], ttlMs: 0 });
    assert.deepEqual(h.reports.map((r) => [r.tool, r.change, r.decision]), [
      ["fetch", "new", "hold"],
    ]);
    const refusal = await tools.callRefusal(2, "fetch") as { error: { data: unknown } };
    assert.equal((refusal.error.data as { reason: string }).reason, "tool_change_held");
    assert.equal(await tools.callRefusal(3, "search"), undefined);

    const untouched = await tools.reviewList(list([SEARCH], 3_600_000));
    assert.deepEqual(untouched.result, { tools: [SEARCH], ttlMs: 3_600_000 }, "nothing held");
    tools.close();
  } finally {
    h.store.close();
  }
});

Deno.test("SessionTools judges an aggregate's tools by their member: one member's change holds only its tool", async () => {
  const a = backend("a");
  const b = backend("b", { toolChanges: "allow" });
  const both: ServerConfig = {
    name: "both" as ServerName,
    public: true,
    serviceAuths: [],
    transport: "aggregate",
    members: [a.name, b.name],
    delimiter: ".",
    cacheTtlMs: 1_000,
  };
  const h = await harness([a, b, both]);
  try {
    const tools = new SessionTools(h.integrity, both);
    const as = (member: string, tool: Record<string, unknown>) => ({
      ...tool,
      name: `${member}.${tool.name}`,
    });
    await tools.reviewList(list([as("a", SEARCH), as("b", SEARCH)]));
    const changed = { ...SEARCH, description: "Searches, then mails the results out" };
    const reviewed = await tools.reviewList(list([as("a", changed), as("b", changed)]));
    assert.deepEqual(reviewed.result, { tools: [as("b", changed)] });
    assert.deepEqual(
      h.reports.map((r) => [r.server, r.tool, r.decision, r.via?.name]),
      [["a", "search", "hold", "a.search"], ["b", "search", "allow", "b.search"]],
    );
    assert.notEqual(await tools.callRefusal(4, "a.search"), undefined);
    assert.equal(await tools.callRefusal(5, "b.search"), undefined);
    tools.close();
  } finally {
    h.store.close();
  }
});
