/**
 * `share: person` and `share: all`: sessions share a stdio process (the real fixture server,
 * started by the gateway), and sharing stays invisible to each client. One person's sessions
 * use one process; each session hears only what belongs to it (answers, elicitation, sampling,
 * roots, resource updates), everyone hears list changes; a cancellation or a DELETE touches
 * only its session; an idle process stops and starts again; a crash ends its sessions.
 */
import assert from "node:assert/strict";
import { FIXTURE_STDIO, startGateway, type TestGateway } from "./fixtures/gateway.ts";
import {
  Client,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  ResourceUpdatedNotificationSchema,
  StreamableHTTPClientTransport,
  ToolListChangedNotificationSchema,
} from "./fixtures/sdk.ts";
import { waitUntil, within } from "./fixtures/waits.ts";
import { INIT, mcpHeaders, openSession, post } from "./fixtures/raw.ts";

const ANN = "ann-token-0123456789abcdef";
const BOB = "bob-token-0123456789abcdef";
const WATCHED = "test://watched-resource";

function config(share: string, extra = ""): string {
  return `
limits: { requestTimeout: 30s }
servers:
  fx:
    transport: stdio
    ${FIXTURE_STDIO}
    serviceAuths: [{ type: bearer, tokens: ["${ANN}", "${BOB}"] }]
    share: ${share}
    ${extra}
`;
}

/** What reached one client from the backend unasked or asked. */
interface Heard {
  elicitations: number;
  samplings: number;
  roots: number;
  listChanged: number;
  updated: string[];
}

interface TestClient {
  client: Client;
  transport: StreamableHTTPClientTransport;
  heard: Heard;
  pid(): Promise<string>;
}

/** An SDK client whose answers to the backend carry `name`, so a test sees who answered. */
async function connect(gw: TestGateway, token: string, name: string): Promise<TestClient> {
  const heard: Heard = { elicitations: 0, samplings: 0, roots: 0, listChanged: 0, updated: [] };
  const client = new Client(
    { name, version: "1.0.0" },
    { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } },
  );
  client.setRequestHandler(ElicitRequestSchema, () => {
    heard.elicitations++;
    return { action: "accept", content: { username: name, email: `${name}@example.com` } };
  });
  client.setRequestHandler(CreateMessageRequestSchema, () => {
    heard.samplings++;
    return { model: "m", role: "assistant", content: { type: "text", text: `from ${name}` } };
  });
  client.setRequestHandler(ListRootsRequestSchema, () => {
    heard.roots++;
    return { roots: [{ uri: `file:///home/${name}`, name }] };
  });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    heard.listChanged++;
  });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    heard.updated.push(notification.params.uri);
  });
  const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/fx/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await within(`${name} connecting`, client.connect(transport));
  const pid = async () => textOf(await client.callTool({ name: "process_id", arguments: {} }));
  return { client, transport, heard, pid };
}

function textOf(result: unknown): string {
  const content = (result as { content: { text?: string }[] }).content;
  return content.map((part) => part.text ?? "").join("");
}

async function callText(who: TestClient, name: string, args: Record<string, unknown> = {}) {
  return textOf(await who.client.callTool({ name, arguments: args }));
}

function readings(gw: TestGateway) {
  return gw.gateway.carried.processes.readings().find((reading) => reading.server === "fx");
}

async function closeAll(clients: TestClient[], gw: TestGateway): Promise<void> {
  await Promise.allSettled(clients.map((who) => who.client.close()));
  await gw.close();
}

Deno.test("share: person: one process for a person's sessions, each session hears only its own", async () => {
  const gw = await startGateway(config("person"));
  const clients: TestClient[] = [];
  try {
    const a = await connect(gw, ANN, "ann-editor");
    const b = await connect(gw, ANN, "ann-cli");
    clients.push(a, b);
    assert.equal(await a.pid(), await b.pid(), "both of ann's sessions reach one process");
    assert.deepEqual(readings(gw), { server: "fx", processes: 1, sessions: 2, busiest: 2 });
    assert.equal(a.client.getServerVersion()?.name, "gatehouse-fixture");
    const metrics = gw.gateway.metrics();
    assert.match(metrics, /gatehouse_shared_processes\{server="fx"\} 1\n/);
    assert.match(metrics, /gatehouse_shared_process_sessions\{server="fx"\} 2\n/);

    // Input the process asks for goes to the session whose call asked, and no other.
    assert.match(await callText(a, "test_elicitation", { message: "who?" }), /ann-editor/);
    assert.match(await callText(b, "test_sampling", { prompt: "hi" }), /from ann-cli/);
    assert.match(await callText(a, "list_roots"), /home\/ann-editor/);
    assert.deepEqual([a.heard.elicitations, a.heard.samplings, a.heard.roots], [1, 0, 1]);
    assert.deepEqual([b.heard.elicitations, b.heard.samplings, b.heard.roots], [0, 1, 0]);

    // With two calls in flight the gateway cannot tell whose the question is: refused.
    const slow = a.client.callTool({ name: "sleep", arguments: { ms: 1_500 } });
    const annSession = gw.gateway.sessions.get(a.transport.sessionId as never);
    await waitUntil("ann's slow call to be in flight", () => annSession?.pendingCount === 1);
    const asked = await b.client.callTool({ name: "test_elicitation", arguments: { message: "?" } })
      .then((result) => JSON.stringify(result), (error) => String(error));
    assert.match(asked, /cannot tell which one asks/);
    assert.equal(textOf(await slow), "slept 1500ms");
    assert.equal(a.heard.elicitations + b.heard.elicitations, 1, "nobody was asked");

    // Ids: both SDK clients number from 0, concurrently; each gets its own answers.
    const answers = await Promise.all([
      callText(a, "sleep", { ms: 200 }),
      callText(b, "sleep", { ms: 100 }),
      callText(a, "sleep", { ms: 50 }),
    ]);
    assert.deepEqual(answers, ["slept 200ms", "slept 100ms", "slept 50ms"]);

    // A cancellation ends only its session's call.
    const abort = new AbortController();
    const cancelled = a.client.callTool({ name: "sleep", arguments: { ms: 20_000 } }, undefined, {
      signal: abort.signal,
    }).then(() => "answered", (error) => String(error));
    const other = callText(b, "sleep", { ms: 300 });
    abort.abort("changed my mind");
    assert.match(await cancelled, /changed my mind|abort/i);
    assert.equal(await other, "slept 300ms");

    // List changes reach every session; resource updates only the subscribers.
    await a.client.subscribeResource({ uri: WATCHED });
    assert.equal(await callText(b, "announce_list_changed"), "announced");
    await waitUntil(
      "both sessions to hear list_changed",
      () => a.heard.listChanged === 1 && b.heard.listChanged === 1,
    );
    assert.equal(await callText(b, "update_resource", { uri: WATCHED }), "updated");
    await waitUntil("the subscriber to hear the update", () => a.heard.updated.length === 1);
    await callText(b, "test_simple_text");
    assert.deepEqual(b.heard.updated, [], "a session that did not subscribe hears no update");

    // One session's DELETE ends only it: the other goes on, on the same process.
    const pid = await b.pid();
    await a.transport.terminateSession();
    await a.client.close();
    assert.equal(await b.pid(), pid);
    assert.deepEqual(readings(gw), { server: "fx", processes: 1, sessions: 1, busiest: 1 });
  } finally {
    await closeAll(clients, gw);
  }
});

Deno.test("share: person keeps people apart; share: all serves them from a pool", async () => {
  const gw = await startGateway(config("person"));
  const clients: TestClient[] = [];
  try {
    const ann = await connect(gw, ANN, "ann");
    const bob = await connect(gw, BOB, "bob");
    clients.push(ann, bob);
    assert.notEqual(await ann.pid(), await bob.pid(), "each person has a process of their own");
    assert.equal(readings(gw)?.processes, 2);
  } finally {
    await closeAll(clients, gw);
  }

  const all = await startGateway(config("all", "processes: 2"));
  const everyone: TestClient[] = [];
  try {
    const ann = await connect(all, ANN, "ann");
    const bob = await connect(all, BOB, "bob");
    const ann2 = await connect(all, ANN, "ann-2");
    everyone.push(ann, bob, ann2);
    const pids = new Set([await ann.pid(), await bob.pid(), await ann2.pid()]);
    assert.equal(pids.size, 2, "three sessions spread over the pool of two");
    assert.deepEqual(readings(all), { server: "fx", processes: 2, sessions: 3, busiest: 2 });

    assert.match(await callText(bob, "test_elicitation", { message: "who?" }), /bob/);
    assert.match(await callText(ann, "test_sampling", { prompt: "hi" }), /from ann/);
    assert.deepEqual([ann.heard.elicitations, bob.heard.elicitations], [0, 1]);
    assert.deepEqual([ann.heard.samplings, bob.heard.samplings], [1, 0]);
    // A process everyone shares never learns one person's roots.
    assert.match(await callText(ann, "list_roots"), /never learns one person's roots/);
    assert.equal(ann.heard.roots + bob.heard.roots + ann2.heard.roots, 0);

    // Tasks outlive their request and are found by id or listed: not on everyone's process.
    const tasks = await post(
      `${all.url}/fx/mcp`,
      { jsonrpc: "2.0", id: 7, method: "tasks/list", params: {} },
      mcpHeaders({ authorization: `Bearer ${BOB}`, "mcp-session-id": bob.transport.sessionId! }),
    );
    assert.match(
      tasks.text,
      /tasks\/list is not available: this server's process is shared by everyone/,
    );

    // A 2026 client of a person joins the pool as well: no third process.
    const discover = await fetch(`${all.url}/fx/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${BOB}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "server/discover",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "server/discover",
        params: {
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": { name: "modern", version: "1" },
          },
        },
      }),
    });
    assert.equal(discover.status, 200, await discover.clone().text());
    assert.match(await discover.text(), /gatehouse-fixture/);
    assert.equal(readings(all)?.processes, 2);
  } finally {
    await closeAll(everyone, all);
  }
});

Deno.test("share: person: an idle process stops and starts again; a crash ends its sessions", async () => {
  const gw = await startGateway(config("person", "processIdleTimeout: 1s"));
  const clients: TestClient[] = [];
  try {
    const first = await connect(gw, ANN, "first");
    clients.push(first);
    const before = await first.pid();
    await first.transport.terminateSession();
    await first.client.close();
    await waitUntil("the idle shared process to stop", () => readings(gw)?.processes === 0);

    const a = await connect(gw, ANN, "a");
    const b = await connect(gw, ANN, "b");
    clients.push(a, b);
    assert.notEqual(await a.pid(), before, "a new process after the idle stop");
    assert.match(gw.gateway.metrics(), /gatehouse_shared_process_restarts_total\{server="fx"\} 1/);

    // The process crashes under a call of a's: both sessions end with a clear error.
    const crashed = await a.client.callTool({ name: "crash", arguments: {} })
      .then((result) => JSON.stringify(result), (error) => String(error));
    assert.match(crashed, /shared backend process ended \(backend process exited with code 3\)/);
    const after = await b.client.callTool({ name: "test_simple_text", arguments: {} })
      .then((result) => JSON.stringify(result), (error) => String(error));
    assert.match(after, /404|Session not found|session/i);
    assert.match(gw.gateway.metrics(), /gatehouse_shared_process_crashes_total\{server="fx"\} 1/);

    // The next session starts the process again.
    const c = await connect(gw, ANN, "c");
    clients.push(c);
    assert.match(await callText(c, "test_simple_text"), /simple text/);
    assert.match(gw.gateway.metrics(), /gatehouse_shared_process_restarts_total\{server="fx"\} 2/);
  } finally {
    await closeAll(clients, gw);
  }
});

Deno.test("limits.processesPerUser bounds a person's shared processes; sessionsPerUser still counts sessions", async () => {
  const gw = await startGateway(`
limits: { processesPerUser: 1, sessionsPerUser: 5 }
servers:
  fx:
    transport: stdio
    ${FIXTURE_STDIO}
    serviceAuths: [{ type: bearer, tokens: ["${ANN}"] }]
    share: person
  fy:
    transport: stdio
    ${FIXTURE_STDIO}
    serviceAuths: [{ type: bearer, tokens: ["${ANN}"] }]
    share: person
`);
  const auth = { authorization: `Bearer ${ANN}` };
  try {
    // Three sessions on one process: within both limits.
    for (let i = 0; i < 3; i++) await openSession(`${gw.url}/fx/mcp`, auth);
    assert.equal(readings(gw)?.sessions, 3);
    const another = await post(`${gw.url}/fy/mcp`, INIT, mcpHeaders(auth));
    assert.equal(another.status, 429, another.text);
    assert.match(another.text, /limits\.processesPerUser: 1/);
    assert.equal(readings(gw)?.sessions, 3, "the refusal ended none of ann's sessions");
  } finally {
    await gw.close();
  }
});

Deno.test("a reload that changes a shared server ends its sessions and stops its process", async () => {
  const gw = await startGateway(config("person"));
  const auth = { authorization: `Bearer ${ANN}` };
  try {
    await openSession(`${gw.url}/fx/mcp`, auth);
    assert.equal(readings(gw)?.processes, 1);
    await gw.reload(config("person", "processIdleTimeout: 10m"));
    await waitUntil("the old process to stop", () => (readings(gw)?.processes ?? 0) === 0);
    await openSession(`${gw.url}/fx/mcp`, auth);
    assert.deepEqual(readings(gw), { server: "fx", processes: 1, sessions: 1, busiest: 1 });
  } finally {
    await gw.close();
  }
});

Deno.test("an aggregate's member with share: person joins the person's process", async () => {
  const gw = await startGateway(`
servers:
  fx:
    transport: stdio
    ${FIXTURE_STDIO}
    serviceAuths: [{ type: bearer, tokens: ["${ANN}"] }]
    share: person
  both:
    transport: aggregate
    servers: [fx]
    serviceAuths: [{ type: bearer, tokens: ["${ANN}"] }]
`);
  const clients: TestClient[] = [];
  try {
    const direct = await connect(gw, ANN, "direct");
    clients.push(direct);
    const client = new Client({ name: "aggregate", version: "1.0.0" });
    await within(
      "an aggregate session",
      client.connect(
        new StreamableHTTPClientTransport(new URL(`${gw.url}/both/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${ANN}` } },
        }),
      ),
    );
    try {
      const pid = textOf(await client.callTool({ name: "fx.process_id", arguments: {} }));
      assert.equal(pid, await direct.pid(), "the member reached ann's one process");
      assert.deepEqual(readings(gw), { server: "fx", processes: 1, sessions: 2, busiest: 2 });
    } finally {
      await client.close();
    }
  } finally {
    await closeAll(clients, gw);
  }
});

Deno.test("each session on a shared process is answered at its own protocol version", async () => {
  const gw = await startGateway(config("person"));
  const headers = mcpHeaders({ authorization: `Bearer ${ANN}` });
  const url = `${gw.url}/fx/mcp`;
  try {
    const answers = [];
    for (const protocolVersion of ["2025-11-25", "2025-06-18", "1999-01-01"]) {
      const init = await post(
        url,
        { ...INIT, params: { ...INIT.params, protocolVersion } },
        headers,
      );
      assert.equal(init.status, 200, init.text);
      answers.push((init.json as { result: Record<string, unknown> }).result);
    }
    // The version asked for when the gateway speaks it, the process's own otherwise.
    assert.deepEqual(answers.map((answer) => answer.protocolVersion), [
      "2025-11-25",
      "2025-06-18",
      "2025-11-25",
    ]);
    for (const answer of answers) {
      assert.equal((answer.serverInfo as { name: string }).name, "gatehouse-fixture");
      assert.ok((answer.capabilities as Record<string, unknown>).tools);
    }
    assert.deepEqual(readings(gw), { server: "fx", processes: 1, sessions: 3, busiest: 3 });
  } finally {
    await gw.close();
  }
});
