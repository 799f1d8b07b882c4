/**
 * MCP Apps through Gatehouse with the official ext-apps examples (npm 2.0.3): server-basic-react
 * and server-basic-vue over stdio (`--stdio`), which both name `ui://get-time/mcp-app.html`, and
 * server-basic-vanillajs over Streamable HTTP (tests/fixtures/mcp_app_http.ts), behind one
 * aggregate and each on its own, read by the SDK clients of both revisions.
 *
 * The ext-apps `basic-host` example, a host that renders the UIs, is not published to npm (only
 * the servers and `@modelcontextprotocol/ext-apps` are), and the MCP Inspector 2.x, which renders
 * them, needs Node 22 and does not install under Deno (its dependency
 * napi-windows-process-start-time is not resolvable), so no browser shows them here; what a host
 * does before it renders is checked instead: each tool names a UI, and reading that URI through
 * the aggregate returns that member's own HTML, byte for byte.
 */
import assert from "node:assert/strict";
import { startGateway, type TestGateway } from "./fixtures/gateway.ts";
import { DENO_DIR, DENO_DIR_YAML } from "./fixtures/deno_dir.ts";
import { spawnFixture } from "./fixtures/fixture_process.ts";
import { Client, StreamableHTTPClientTransport } from "./fixtures/sdk.ts";
import { connectV2Client } from "./fixtures/v2_client.ts";
import { within } from "./fixtures/waits.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const VERSION = "2.0.3";
const EXAMPLES = { react: "server-basic-react", vue: "server-basic-vue" } as const;
const TOKEN = "apps-token-0123456789abcdef";
const UI = { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } };
const APP_URI = "ui://get-time/mcp-app.html";
/** Other spellings of APP_URI that a server reading URIs as URLs serves as APP_URI. */
const SPELLINGS = [
  "UI://get-time/mcp-app.html",
  "ui://get-time/x/../mcp-app.html",
  "ui://get-time/%2e/mcp-app.html",
  " ui://get-time/mcp-app.html",
];

/** Fetches the example once with this process's environment; the children start from the cache. */
async function cache(pkg: string): Promise<void> {
  const cached = await new Deno.Command("deno", {
    args: ["cache", "--no-config", `npm:@modelcontextprotocol/${pkg}@${VERSION}`],
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.equal(cached.code, 0, new TextDecoder().decode(cached.stderr));
}

/** The HTML the example ships (dist/mcp-app.html in its package): what a read must return. */
function shippedHtml(pkg: string): string {
  return Deno.readTextFileSync(
    `${DENO_DIR}/npm/registry.npmjs.org/@modelcontextprotocol/${pkg}/${VERSION}/dist/mcp-app.html`,
  );
}

function stdioExample(name: string, pkg: string, extra = ""): string {
  return `  ${name}:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, -A, --no-config, "npm:@modelcontextprotocol/${pkg}@${VERSION}", --stdio]
    serviceAuths: [{ type: bearer, tokens: ["${TOKEN}"] }]
${extra}`;
}

async function v1Client(gw: TestGateway, server: string, capabilities = {}): Promise<Client> {
  const client = new Client({ name: "apps-test", version: "1.0.0" }, {
    capabilities: capabilities as never,
  });
  const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/${server}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
  });
  await within(`a session of ${server}`, client.connect(transport));
  return client;
}

interface Reader {
  listTools(): Promise<{ tools: { name: string; _meta?: Record<string, unknown> }[] }>;
  readResource(params: { uri: string }): Promise<{ contents: unknown[] }>;
  listResources(): Promise<{ resources: { uri: string }[] }>;
}

const uiOf = (tool: { _meta?: Record<string, unknown> } | undefined) =>
  (tool?._meta?.ui as { resourceUri?: string } | undefined)?.resourceUri;

async function htmlAt(client: Reader, uri: string): Promise<{ uri: string; text: string }> {
  const read = await within(`reading ${uri}`, client.readResource({ uri }));
  return read.contents[0] as { uri: string; text: string };
}

/** What a host does through the aggregate: each member's tool, its own UI, its own HTML. */
async function eachMembersUi(client: Reader, vanillaHtml: string) {
  const { tools } = await client.listTools();
  const expected = {
    react: shippedHtml(EXAMPLES.react),
    vue: shippedHtml(EXAMPLES.vue),
    vanilla: vanillaHtml,
  };
  const uris = new Set<string>();
  for (const [member, html] of Object.entries(expected)) {
    const tool = tools.find((t) => t.name === `${member}.get-time`);
    assert.ok(tool, `${member}.get-time is listed: ${tools.map((t) => t.name)}`);
    const uri = uiOf(tool);
    assert.equal(uri, `ui://${member}/get-time/mcp-app.html`);
    assert.equal(tool._meta!["ui/resourceUri"], uri, "the older key names the same UI");
    uris.add(uri!);
    const content = await htmlAt(client, uri!);
    assert.equal(content.uri, uri);
    assert.ok(content.text === html, `${uri} is ${member}'s own HTML`);
  }
  assert.equal(uris.size, 3, "three members, three UIs");
  assert.notEqual(expected.react, expected.vue, "the bundles differ, so the check can tell");
  const { resources } = await client.listResources();
  assert.deepEqual(resources.map((r) => r.uri).sort(), [...uris].sort());
}

Deno.test("MCP Apps: an aggregate of the ext-apps examples shows each member's own UI, in both revisions; each server alone is unchanged", async (t) => {
  await Promise.all([cache(EXAMPLES.react), cache(EXAMPLES.vue)]);
  const vanilla = await spawnFixture("mcp_app_http.ts");
  const gw = await startGateway(`
servers:
${stdioExample("react", EXAMPLES.react)}${stdioExample("vue", EXAMPLES.vue)}  vanilla:
    transport: streamable-http
    url: ${vanilla.url}
    serviceAuths: [{ type: bearer, tokens: ["${TOKEN}"] }]
  apps:
    transport: aggregate
    servers: [react, vue, vanilla]
    serviceAuths: [{ type: bearer, tokens: ["${TOKEN}"] }]
`);
  try {
    const direct = await v1Client(gw, "vanilla", { extensions: UI });
    const vanillaHtml = (await htmlAt(direct, APP_URI)).text;
    await direct.close();
    assert.match(vanillaHtml, /<html/i);

    await t.step("2025-11-25 session", async () => {
      const client = await v1Client(gw, "apps", { extensions: UI });
      try {
        await eachMembersUi(client, vanillaHtml);
      } finally {
        await client.close();
      }
    });

    await t.step("2026-07-28, no session", async () => {
      const v2 = await connectV2Client(`${gw.url}/apps/mcp`, {
        token: TOKEN,
        capabilities: { extensions: UI },
      });
      try {
        await eachMembersUi(v2.client as unknown as Reader, vanillaHtml);
      } finally {
        await v2.close();
      }
    });

    await t.step("each server behind its own URL: as the server wrote it", async () => {
      for (const [member, pkg] of Object.entries(EXAMPLES)) {
        const client = await v1Client(gw, member, { extensions: UI });
        try {
          const { tools } = await client.listTools();
          assert.equal(uiOf(tools.find((tool) => tool.name === "get-time")), APP_URI);
          const content = await htmlAt(client, APP_URI);
          assert.equal(content.uri, APP_URI);
          assert.ok(content.text === shippedHtml(pkg), `${member}'s HTML through /${member}/mcp`);
        } finally {
          await client.close();
        }
        const v2 = await connectV2Client(`${gw.url}/${member}/mcp`, { token: TOKEN });
        try {
          const { tools } = await v2.client.listTools();
          assert.equal(uiOf(tools.find((tool) => tool.name === "get-time")), APP_URI);
          const read = await v2.client.readResource({ uri: APP_URI });
          assert.ok((read.contents[0] as { text: string }).text === shippedHtml(pkg));
        } finally {
          await v2.close();
        }
      }
    });
  } finally {
    await gw.close();
    await vanilla.close();
  }
});

Deno.test("MCP Apps: a tool the person may not use shows no UI through the aggregate, and its UI cannot be read", async () => {
  await Promise.all([cache(EXAMPLES.react), cache(EXAMPLES.vue)]);
  const gw = await startGateway(`
servers:
${stdioExample("react", EXAMPLES.react)}${stdioExample("vue", EXAMPLES.vue)}  apps:
    transport: aggregate
    servers: [react, vue]
    serviceAuths: [{ type: bearer, tokens: ["${TOKEN}"] }]
    tools: { allow: ["react.*"] }
`);
  try {
    const client = await v1Client(gw, "apps", { extensions: UI });
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((tool) => tool.name), ["react.get-time"]);
      const { resources } = await client.listResources();
      assert.deepEqual(resources.map((r) => r.uri), ["ui://react/get-time/mcp-app.html"]);
      const refused = await client.readResource({ uri: "ui://vue/get-time/mcp-app.html" })
        .catch((error) => error);
      assert.ok(refused instanceof Error, "the denied tool's UI is not read");
      assert.match(refused.message, /the interface of a tool that is not available to you/);
      for (const uri of ["ui://vue/get-time/x/../mcp-app.html", "UI://vue/get-time/mcp-app.html"]) {
        const spelled = await client.readResource({ uri }).catch((error) => error);
        assert.match(String(spelled?.message), /not available to you/, JSON.stringify(uri));
      }
      // The React member's UI still reads, and an App calling "get-time" by its own name
      // reaches the one member whose get-time the person may use.
      const allowed = await htmlAt(client, "ui://react/get-time/mcp-app.html");
      assert.ok(allowed.text === shippedHtml(EXAMPLES.react));
      const own = await client.callTool({ name: "get-time", arguments: {} });
      assert.equal(own.isError, undefined, JSON.stringify(own));
    } finally {
      await client.close();
    }
  } finally {
    await gw.close();
  }
});

Deno.test("MCP Apps: behind a server's own URL too, a denied tool's UI is not read, in both revisions", async () => {
  await cache(EXAMPLES.react);
  const gw = await startGateway(`
servers:
${stdioExample("react", EXAMPLES.react, '    tools: { deny: ["get-time"] }\n')}`);
  try {
    const client = await v1Client(gw, "react", { extensions: UI });
    try {
      assert.deepEqual((await client.listTools()).tools, []);
      // Read before any list too: the session lists the server's tools itself to judge it.
      const refused = await client.readResource({ uri: APP_URI }).catch((error) => error);
      assert.ok(refused instanceof Error, "the denied tool's UI is not read");
      assert.match(
        refused.message,
        /the resource ui:\/\/get-time\/mcp-app\.html is the interface of a tool that is not available to you on the server "react"/,
      );
      // The example reads a URI as a URL: these spellings are its UI too, and refused as such.
      // Nor watched for changes, as through an aggregate.
      const watched = await client.subscribeResource({ uri: APP_URI }).catch((error) => error);
      assert.match(String(watched?.message), /not available to you/);
      for (const uri of SPELLINGS) {
        const spelled = await client.readResource({ uri }).catch((error) => error);
        assert.ok(spelled instanceof Error, `${JSON.stringify(uri)} is not read`);
        assert.match(spelled.message, /not available to you/, JSON.stringify(uri));
      }
    } finally {
      await client.close();
    }
    const v2 = await connectV2Client(`${gw.url}/react/mcp`, { token: TOKEN });
    try {
      const refused = await v2.client.readResource({ uri: APP_URI }).catch((error) => error);
      assert.ok(refused instanceof Error, "nor by a 2026 client");
      assert.match(refused.message, /not available to you/);
      for (const uri of SPELLINGS) {
        const spelled = await v2.client.readResource({ uri }).catch((error) => error);
        assert.match(String(spelled?.message), /not available to you/, JSON.stringify(uri));
      }
    } finally {
      await v2.close();
    }
  } finally {
    await gw.close();
  }
});

Deno.test("MCP Apps: the UI extension a client declares reaches the backend on every lane", async (t) => {
  const minimal = (name: string, extra = "") =>
    `  ${name}:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts", "0", ui-if-capable]
    serviceAuths: [{ type: bearer, tokens: ["${TOKEN}"] }]
${extra}`;
  const gw = await startGateway(`
servers:
${minimal("solo")}${minimal("shared", "    share: all\n")}  both:
    transport: aggregate
    servers: [solo]
    serviceAuths: [{ type: bearer, tokens: ["${TOKEN}"] }]
`);
  const names = async (client: Reader) => (await client.listTools()).tools.map((t) => t.name);
  try {
    await t.step("a 2025 session passes the client's own capabilities on", async () => {
      for (const [server, app] of [["solo", "show_app"], ["both", "solo.show_app"]]) {
        const capable = await v1Client(gw, server, { extensions: UI });
        assert.ok((await names(capable)).includes(app), `${server} offers its UI`);
        const plain = await v1Client(gw, server);
        assert.ok(!(await names(plain)).includes(app), `${server} keeps it from a plain client`);
        await Promise.all([capable.close(), plain.close()]);
      }
    });
    await t.step("a process shared by everyone, and a 2026 client's link, declare it", async () => {
      const shared = await v1Client(gw, "shared");
      assert.ok((await names(shared)).includes("show_app"));
      await shared.close();
      const v2 = await connectV2Client(`${gw.url}/solo/mcp`, {
        token: TOKEN,
        capabilities: { extensions: UI },
      });
      const { tools } = await v2.client.listTools();
      const app = tools.find((tool) => tool.name === "show_app");
      assert.equal(uiOf(app), "ui://minimal/app.html");
      await v2.close();
    });
  } finally {
    await gw.close();
  }
});
