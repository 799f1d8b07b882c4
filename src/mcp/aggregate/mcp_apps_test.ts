/**
 * MCP Apps through an aggregate, with real SDK servers as members in process: two members that
 * name the same `ui://` resource keep their UIs apart, reads reach the right member under its
 * own URI (listed or only named by a tool), an App's own calls by its server's tool names are
 * routed when one member has the name and refused when several do, and a tool the caller may
 * not use takes its UI with it.
 */
import assert from "node:assert/strict";
import { ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { aggregateOf, McpServer, TTL_MS } from "../../../tests/fixtures/aggregate_members.ts";
import {
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  Server,
} from "../../../tests/fixtures/sdk.ts";
import { testClock } from "../../../tests/fixtures/clock.ts";
import { DiscoveryCache } from "./cache.ts";
import { UI_CLIENT_EXTENSIONS, UI_MIME_TYPE } from "../protocol/mcp_apps.ts";

const UI = "ui://widget/app.html";
const CSP = { connectDomains: ["https://api.example.com"], resourceDomains: [] };

/**
 * A member like the ext-apps examples: `show` names `ui://widget/app.html` (in all three places
 * servers put it), which the member lists (or, with `listed: false`, only names), and reading
 * it returns this member's HTML; `refresh_<name>` is a tool only this member has.
 */
function appMember(name: string, listed = true): McpServer {
  const server = new McpServer({ name, version: "1.0.0" }, {
    capabilities: { extensions: { "io.modelcontextprotocol/ui": {} } } as never,
  });
  server.registerTool("show", {
    description: `shows ${name}'s widget`,
    _meta: {
      ui: { resourceUri: UI, csp: CSP, visibility: ["model", "app"] },
      "ui/resourceUri": UI,
      "openai/outputTemplate": UI,
      other: "kept",
    },
  }, () => ({ content: [{ type: "text", text: `${name} shown` }] }));
  server.registerTool("secret", {
    description: "a tool some may not use, with a UI of its own",
    _meta: { ui: { resourceUri: "ui://secret/app.html" } },
  }, () => ({ content: [{ type: "text", text: "secret" }] }));
  server.registerTool(`refresh_${name}`, {}, () => ({
    content: [{ type: "text", text: `${name} refreshed` }],
  }));
  const read = (uri: URL) => ({
    contents: [{
      uri: uri.href,
      mimeType: UI_MIME_TYPE,
      text: `<html>${name}</html>`,
      _meta: { ui: { csp: CSP } },
    }],
  });
  if (listed) {
    server.registerResource("widget", UI, { mimeType: UI_MIME_TYPE }, read);
    server.registerResource("secret", "ui://secret/app.html", { mimeType: UI_MIME_TYPE }, read);
  } else {
    // Named by the tool only: read through a template that matches any ui:// URI.
    server.server.registerCapabilities({ resources: {} });
    server.server.setRequestHandler(
      ReadResourceRequestSchema,
      (request) => read(new URL(request.params.uri)),
    );
  }
  return server;
}

const textOf = (read: { contents: unknown[] }) => (read.contents[0] as { text: string }).text;

Deno.test("an aggregate names each member's UI apart and reads it from that member under its own URI", async () => {
  const h = await aggregateOf({ react: () => appMember("react"), vue: () => appMember("vue") }, {
    capabilities: { extensions: UI_CLIENT_EXTENSIONS },
  });
  try {
    const caps = h.client.getServerCapabilities() as Record<string, unknown>;
    assert.deepEqual(caps.extensions, { "io.modelcontextprotocol/ui": {} }, "declared on");
    const { tools } = await h.client.listTools();
    const react = tools.find((t) => t.name === "react.show")!;
    const vue = tools.find((t) => t.name === "vue.show")!;
    assert.deepEqual(react._meta, {
      ui: { resourceUri: "ui://react/widget/app.html", csp: CSP, visibility: ["model", "app"] },
      "ui/resourceUri": "ui://react/widget/app.html",
      "openai/outputTemplate": "ui://react/widget/app.html",
      other: "kept",
    });
    assert.equal(
      (vue._meta!.ui as { resourceUri: string }).resourceUri,
      "ui://vue/widget/app.html",
    );

    const { resources } = await h.client.listResources();
    assert.deepEqual(resources.map((r) => r.uri).sort(), [
      "ui://react/secret/app.html",
      "ui://react/widget/app.html",
      "ui://vue/secret/app.html",
      "ui://vue/widget/app.html",
    ]);
    for (const member of ["react", "vue"]) {
      const read = await h.client.readResource({ uri: `ui://${member}/widget/app.html` });
      assert.equal(textOf(read), `<html>${member}</html>`);
      const content = read.contents[0] as Record<string, unknown>;
      assert.equal(
        content.uri,
        `ui://${member}/widget/app.html`,
        "named as the aggregate names it",
      );
      assert.deepEqual(content._meta, { ui: { csp: CSP } }, "the server's CSP passes unchanged");
      assert.equal(content.mimeType, UI_MIME_TYPE);
    }
    // Each member was asked for its own URI, never the aggregate's.
    const unknown = await h.client.readResource({ uri: "ui://nobody/widget/app.html" })
      .catch((e) => e);
    assert.ok(unknown instanceof McpError);
    assert.match(unknown.message, /no member of this aggregate serves the resource/);
  } finally {
    await h.close();
  }
});

Deno.test("an aggregate reads a UI a member names in a tool but never lists", async () => {
  const h = await aggregateOf({
    react: () => appMember("react", false),
    vue: () => appMember("vue", false),
  });
  try {
    assert.deepEqual((await h.client.listResources()).resources, []);
    const read = await h.client.readResource({ uri: "ui://vue/widget/app.html" });
    assert.equal(textOf(read), "<html>vue</html>");
    assert.equal((read.contents[0] as { uri: string }).uri, "ui://vue/widget/app.html");
  } finally {
    await h.close();
  }
});

Deno.test("an App's own tool call by its server's name goes to the one member that has it; several are refused by name", async () => {
  const h = await aggregateOf({ react: () => appMember("react"), vue: () => appMember("vue") });
  try {
    await h.client.listTools();
    const own = await h.client.callTool({ name: "refresh_vue", arguments: {} });
    assert.deepEqual(own.content, [{ type: "text", text: "vue refreshed" }]);
    const ambiguous = await h.client.callTool({ name: "show", arguments: {} }).catch((e) => e);
    assert.ok(ambiguous instanceof McpError, "refused, not sent to either");
    assert.match(
      ambiguous.message,
      /the tool "show" is offered by 2 members of this aggregate \(react\.show, vue\.show\): call it by one of those names/,
    );
    assert.deepEqual(ambiguous.data, {
      reason: "ambiguous_tool",
      tools: ["react.show", "vue.show"],
    });
    const named = await h.client.callTool({ name: "vue.show", arguments: {} });
    assert.deepEqual(named.content, [{ type: "text", text: "vue shown" }]);
  } finally {
    await h.close();
  }
});

Deno.test("a tool the caller may not use takes its UI along: not listed, not read, not called by its own name", async () => {
  const h = await aggregateOf({ react: () => appMember("react"), vue: () => appMember("vue") }, {
    memberTools: (_member, tools) => tools.filter((t) => t.name !== "secret"),
  });
  try {
    const { tools } = await h.client.listTools();
    assert.ok(!tools.some((t) => t.name.endsWith(".secret")));
    const { resources } = await h.client.listResources();
    assert.deepEqual(resources.map((r) => r.uri).sort(), [
      "ui://react/widget/app.html",
      "ui://vue/widget/app.html",
    ]);
    const refused = await h.client.readResource({ uri: "ui://react/secret/app.html" })
      .catch((e) => e);
    assert.ok(refused instanceof McpError);
    assert.match(refused.message, /is the interface of a tool that is not available to you/);
    assert.deepEqual(refused.data, { reason: "tool_not_allowed" });
    // The member reads a URI as a URL (dot segments gone, scheme in any case, blanks around
    // it dropped): every spelling that reaches the same UI is refused as the plain one is.
    for (
      const uri of [
        "ui://react/secret/x/../app.html",
        "ui://react/secret/%2e/app.html",
        "UI://react/secret/app.html",
        "ui://react/secret/app.html\t",
      ]
    ) {
      const spelled = await h.client.readResource({ uri }).catch((e) => e);
      assert.ok(spelled instanceof McpError, `${JSON.stringify(uri)} is not read`);
      assert.deepEqual(spelled.data, { reason: "tool_not_allowed" }, JSON.stringify(uri));
    }
    assert.equal(
      textOf(await h.client.readResource({ uri: "ui://react/widget/app.html" })),
      "<html>react</html>",
    );
    const secret = await h.client.callTool({ name: "secret", arguments: {} }).catch((e) => e);
    assert.ok(secret instanceof McpError, "a withheld tool is not reached by its own name either");
  } finally {
    await h.close();
  }
});

/**
 * A member as the ext-apps SDK documents it (getUiCapability): its tool shows a UI only to a
 * client whose `io.modelcontextprotocol/ui` settings list the MCP App MIME type.
 */
function uiIfRendered(): Server {
  const server = new Server({ name: "apps", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => {
    const ui = (server.getClientCapabilities() as { extensions?: Record<string, unknown> })
      ?.extensions?.["io.modelcontextprotocol/ui"] as { mimeTypes?: string[] } | undefined;
    const rendered = ui?.mimeTypes?.includes(UI_MIME_TYPE);
    return {
      tools: [{
        name: "show",
        inputSchema: { type: "object" },
        ...(rendered && { _meta: { ui: { resourceUri: UI } } }),
      }],
    };
  });
  return server;
}

Deno.test("the shared list cache keeps apart clients that declare the UI extension with different settings", async () => {
  const cache = new DiscoveryCache(TTL_MS, testClock());
  const shown = async (settings: Record<string, unknown>) => {
    const h = await aggregateOf({ apps: uiIfRendered }, {
      cache,
      capabilities: { extensions: { "io.modelcontextprotocol/ui": settings } },
    });
    try {
      const { tools } = await h.client.listTools();
      return (tools[0]._meta?.ui as { resourceUri?: string } | undefined)?.resourceUri;
    } finally {
      await h.close();
    }
  };
  // A client that names the extension but renders no MCP App HTML lists first …
  assert.equal(await shown({}), undefined);
  // … and a host that renders them still gets the member's UI, not that client's list; and back.
  assert.equal(await shown({ mimeTypes: [UI_MIME_TYPE] }), "ui://apps/widget/app.html");
  assert.equal(await shown({}), undefined);
});

Deno.test("a withheld UI is not read by its member's own URI through a template that matches anything", async () => {
  const catchAll = () => {
    const server = appMember("react");
    // Such as a file server's `{+path}`: the aggregate routes URIs no member lists by it.
    server.registerResource(
      "any",
      new ResourceTemplate("{+uri}", { list: undefined }),
      {},
      (uri) => ({
        contents: [{ uri: uri.href, text: `any ${uri.href}` }],
      }),
    );
    return server;
  };
  const h = await aggregateOf({ react: catchAll }, {
    memberTools: (_member, tools) => tools.filter((t) => t.name !== "secret"),
  });
  try {
    for (const uri of ["ui://secret/app.html", "UI://secret/x/../app.html"]) {
      const refused = await h.client.readResource({ uri }).catch((e) => e);
      assert.ok(refused instanceof McpError, `${uri} is not read`);
      assert.deepEqual(refused.data, { reason: "tool_not_allowed" }, uri);
    }
    const other = await h.client.readResource({ uri: "notes://a" });
    assert.equal(textOf(other), "any notes://a", "the template serves the rest");
  } finally {
    await h.close();
  }
});
