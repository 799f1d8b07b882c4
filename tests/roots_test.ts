/**
 * A client's roots reach a backend unless the server says `forwardRoots: false`: then the
 * backend sees no `roots` capability at initialize, gets no `notifications/roots/list_changed`,
 * and its `roots/list` is refused by the gateway without ever reaching the client (a
 * filesystem server would otherwise let the client's roots replace its own sandbox).
 */
import assert from "node:assert/strict";
import { FIXTURE_STDIO, startGateway } from "./fixtures/gateway.ts";
import { Client, ListRootsRequestSchema, StreamableHTTPClientTransport } from "./fixtures/sdk.ts";
import { waitUntil } from "./fixtures/waits.ts";

const ROOTS = [{ uri: "file:///etc/gatehouse", name: "the gateway's own config" }];

interface Seen {
  clientCapabilities?: Record<string, unknown>;
  rootsChanged: number;
  roots?: unknown[];
  error?: string;
}

/** The SDK client offering roots; counts the roots/list requests that reach it. */
async function connectWithRoots(url: string): Promise<{ client: Client; asked: () => number }> {
  let asked = 0;
  const client = new Client(
    { name: "roots-test", version: "1.0.0" },
    { capabilities: { roots: { listChanged: true }, sampling: {} } },
  );
  client.setRequestHandler(ListRootsRequestSchema, () => {
    asked++;
    return { roots: ROOTS };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return { client, asked: () => asked };
}

async function listRoots(client: Client, tool: string): Promise<Seen> {
  const result = await client.callTool({ name: tool, arguments: {} });
  return result.structuredContent as unknown as Seen;
}

Deno.test("roots: forwarded to a backend by default; withheld from one with forwardRoots: false", async () => {
  const gw = await startGateway(`
servers:
  open:
    transport: stdio
    ${FIXTURE_STDIO}
    public: true
  sandboxed:
    transport: stdio
    ${FIXTURE_STDIO}
    public: true
    forwardRoots: false
  both:
    transport: aggregate
    servers: [open, sandboxed]
    public: true
`);
  const clients: Client[] = [];
  try {
    // Default: the backend sees the capability, the notification and the client's answer.
    const open = await connectWithRoots(`${gw.url}/open/mcp`);
    clients.push(open.client);
    await open.client.sendRootsListChanged();
    const forwarded = await listRoots(open.client, "list_roots");
    assert.deepEqual(forwarded.clientCapabilities?.roots, { listChanged: true });
    assert.deepEqual(forwarded.roots, ROOTS);
    assert.equal(forwarded.rootsChanged, 1);
    assert.equal(open.asked(), 1);

    // forwardRoots: false: none of it, and the backend's request is answered by the gateway.
    const sandboxed = await connectWithRoots(`${gw.url}/sandboxed/mcp`);
    clients.push(sandboxed.client);
    await sandboxed.client.sendRootsListChanged();
    const withheld = await listRoots(sandboxed.client, "list_roots");
    assert.equal(withheld.clientCapabilities?.roots, undefined);
    assert.deepEqual(withheld.clientCapabilities?.sampling, {}, "other capabilities stay");
    assert.equal(withheld.roots, undefined);
    assert.match(
      withheld.error ?? "",
      /-32601.*the gateway does not forward roots to this server \(forwardRoots: false\)/,
    );
    assert.equal(withheld.rootsChanged, 0);
    assert.equal(sandboxed.asked(), 0, "the client was never asked");

    // In an aggregate each member follows its own setting.
    const both = await connectWithRoots(`${gw.url}/both/mcp`);
    clients.push(both.client);
    await both.client.sendRootsListChanged();
    let member: Seen | undefined;
    await waitUntil("the open member to get roots list_changed", async () => {
      member = await listRoots(both.client, "open.list_roots");
      return member.rootsChanged === 1;
    });
    assert.deepEqual(member!.roots, ROOTS);
    const askedByOpen = both.asked();
    assert.ok(askedByOpen >= 1);
    const sandboxedMember = await listRoots(both.client, "sandboxed.list_roots");
    assert.equal(sandboxedMember.clientCapabilities?.roots, undefined);
    assert.equal(sandboxedMember.rootsChanged, 0);
    assert.match(sandboxedMember.error ?? "", /forwardRoots: false/);
    assert.equal(both.asked(), askedByOpen, "the sandboxed member's request never reached it");
  } finally {
    await Promise.all(clients.map((client) => client.close().catch(() => {})));
    await gw.close();
  }
});
