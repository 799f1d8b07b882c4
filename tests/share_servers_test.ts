/**
 * `share:` with third-party stdio servers, as people run them: the SDK's server-everything (the
 * demo), server-memory (a knowledge graph in a file: state a shared process really shares) and
 * a server written with FastMCP (TypeScript), each driven by the SDK client through the gateway.
 */
import assert from "node:assert/strict";
import { liveChildren } from "../src/mcp/backends/spawner.ts";
import { startGateway, type TestGateway } from "./fixtures/gateway.ts";
import { Client, StreamableHTTPClientTransport } from "./fixtures/sdk.ts";
import { within } from "./fixtures/waits.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const EVERYTHING = "npm:@modelcontextprotocol/server-everything@2026.8.31";
const MEMORY = "npm:@modelcontextprotocol/server-memory@2026.8.31";
const FASTMCP = "npm:fastmcp@4.20.16";
const ANN = "ann-token-0123456789abcdef";
const BOB = "bob-token-0123456789abcdef";
const AUTH = `serviceAuths: [{ type: bearer, tokens: ["${ANN}", "${BOB}"] }]`;

/** Fetches a package once with this process's environment; the children start from the cache. */
async function cache(specifier: string): Promise<void> {
  const cached = await new Deno.Command("deno", {
    args: ["cache", "--no-config", specifier],
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.equal(cached.code, 0, new TextDecoder().decode(cached.stderr));
}

async function connect(gw: TestGateway, server: string, token: string): Promise<Client> {
  const client = new Client({ name: "share-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/${server}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await within(`a session of ${server}`, client.connect(transport));
  return client;
}

function textOf(result: unknown): string {
  return (result as { content: { text?: string }[] }).content.map((part) => part.text ?? "")
    .join("");
}

function readings(gw: TestGateway, server: string) {
  return gw.gateway.carried.processes.readings().find((reading) => reading.server === server);
}

Deno.test("share: person with server-everything: one process for two sessions, answers kept apart", async () => {
  await cache(EVERYTHING);
  const before = liveChildren();
  const gw = await startGateway(`
servers:
  demo:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, -A, --no-config, "${EVERYTHING}", stdio]
    ${AUTH}
    share: person
`);
  const clients: Client[] = [];
  try {
    clients.push(await connect(gw, "demo", ANN), await connect(gw, "demo", ANN));
    const [a, b] = clients;
    assert.equal(liveChildren() - before, 1, "one process for both of ann's sessions");
    assert.deepEqual(readings(gw, "demo"), {
      server: "demo",
      processes: 1,
      sessions: 2,
      busiest: 2,
    });
    assert.equal(a.getServerVersion()?.name, "mcp-servers/everything");
    // Both clients number their requests alike; each gets its own answers.
    const echoed = await Promise.all([
      a.callTool({ name: "echo", arguments: { message: "from a" } }),
      b.callTool({ name: "echo", arguments: { message: "from b" } }),
      a.callTool({ name: "get-sum", arguments: { a: 2, b: 3 } }),
    ]);
    assert.deepEqual(echoed.map(textOf), [
      "Echo: from a",
      "Echo: from b",
      "The sum of 2 and 3 is 5.",
    ]);
  } finally {
    await Promise.allSettled(clients.map((client) => client.close()));
    await gw.close();
  }
});

Deno.test("server-memory: share: person keeps each person's graph; share: all shares one", async () => {
  await cache(MEMORY);
  const dir = await Deno.makeTempDir();
  const gw = await startGateway(`
servers:
  mine:
    transport: stdio
    command: deno
    args: [run, -A, --no-config, "${MEMORY}"]
    env: { ${DENO_DIR_YAML}, MEMORY_FILE_PATH: "${dir}/{{user.id}}.json" }
    ${AUTH}
    share: person
  ours:
    transport: stdio
    command: deno
    args: [run, -A, --no-config, "${MEMORY}"]
    env: { ${DENO_DIR_YAML}, MEMORY_FILE_PATH: "${dir}/everyone.json" }
    ${AUTH}
    share: all
`);
  const clients: Client[] = [];
  const open = async (server: string, token: string) => {
    const client = await connect(gw, server, token);
    clients.push(client);
    return client;
  };
  const note = { entities: [{ name: "ann-note", entityType: "note", observations: ["hi"] }] };
  const graph = async (client: Client) =>
    textOf(await client.callTool({ name: "read_graph", arguments: {} }));
  try {
    const annEditor = await open("mine", ANN);
    const annCli = await open("mine", ANN);
    const bob = await open("mine", BOB);
    await annEditor.callTool({ name: "create_entities", arguments: note });
    assert.match(await graph(annCli), /ann-note/, "ann's other session sees her graph");
    assert.doesNotMatch(await graph(bob), /ann-note/, "bob's process never had ann's graph");
    assert.equal(readings(gw, "mine")?.processes, 2);

    const annShared = await open("ours", ANN);
    const bobShared = await open("ours", BOB);
    await annShared.callTool({ name: "create_entities", arguments: note });
    assert.match(await graph(bobShared), /ann-note/, "share: all shares the server's state");
    assert.equal(readings(gw, "ours")?.processes, 1);
  } finally {
    await Promise.allSettled(clients.map((client) => client.close()));
    await gw.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("share: all with a FastMCP server: two people, one process", async () => {
  const dir = await Deno.makeTempDir();
  // Written here rather than kept in tests/: FastMCP is no dependency of the project's.
  await Deno.writeTextFile(
    `${dir}/server.ts`,
    `import { FastMCP } from "${FASTMCP}";
const server = new FastMCP({ name: "fast", version: "1.0.0" });
server.addTool({ name: "pid", description: "this process's pid", execute: () => Promise.resolve(String(Deno.pid)) });
server.start({ transportType: "stdio" });
`,
  );
  await cache(`${dir}/server.ts`);
  const gw = await startGateway(`
servers:
  fast:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, -A, --no-config, "${dir}/server.ts"]
    ${AUTH}
    share: all
`);
  const clients: Client[] = [];
  try {
    clients.push(await connect(gw, "fast", ANN), await connect(gw, "fast", BOB));
    const pids = await Promise.all(
      clients.map(async (client) => textOf(await client.callTool({ name: "pid", arguments: {} }))),
    );
    assert.match(pids[0], /^\d+$/);
    assert.equal(pids[0], pids[1], "both people reach the one process");
    assert.equal(readings(gw, "fast")?.sessions, 2);
  } finally {
    await Promise.allSettled(clients.map((client) => client.close()));
    await gw.close();
    await Deno.remove(dir, { recursive: true });
  }
});
