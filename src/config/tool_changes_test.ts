import assert from "node:assert/strict";
import { ConfigError } from "./issues.ts";
import { parseConfigText } from "./load.ts";
import { isRemoteUrl } from "./tool_changes.ts";
import type { BackendServerConfig } from "./types.ts";

const DIGEST = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

function servers(yaml: string): Map<string, BackendServerConfig> {
  const config = parseConfigText(`servers:\n${yaml}`, () => undefined, "config.yaml");
  return config.servers as Map<string, BackendServerConfig>;
}

function problems(yaml: string): string[] {
  try {
    parseConfigText(`servers:\n${yaml}`, () => undefined, "config.yaml");
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
  }
  assert.fail("the document was accepted");
}

Deno.test("toolChanges defaults to hold for a remote HTTP host and to allow for what is local", () => {
  const parsed = servers(`
  remote: { transport: streamable-http, url: "https://mcp.vendor.example/mcp", public: true }
  legacy: { transport: sse, url: "https://mcp.vendor.example/sse", public: true }
  loopback: { transport: streamable-http, url: "http://127.0.0.1:3000/mcp", public: true }
  lan: { transport: streamable-http, url: "http://10.0.0.12:3000/mcp", public: true }
  compose: { transport: streamable-http, url: "http://github-mcp:8080/mcp", public: true }
  program: { transport: stdio, command: npx, public: true }
  chosen: { transport: streamable-http, url: "http://127.0.0.1:1/mcp", public: true, toolChanges: refuse }
`);
  const modes = Object.fromEntries(
    [...parsed].map(([name, server]) => [name, [server.toolChanges, server.toolChangesDefaulted]]),
  );
  assert.deepEqual(modes, {
    remote: ["hold", true],
    legacy: ["hold", true],
    loopback: ["allow", true],
    lan: ["allow", true],
    compose: ["allow", true],
    program: ["allow", true],
    chosen: ["refuse", false],
  });
});

Deno.test("isRemoteUrl() tells private and loopback hosts from the rest", () => {
  for (
    const url of [
      "http://localhost:1",
      "http://[::1]:1",
      "http://192.168.1.2",
      "http://[fd00::1]",
      "http://x.internal",
      // Address literals as core/ip_ranges.ts reads them: a mapped IPv6 is its IPv4.
      "http://[::ffff:192.168.1.2]",
      "http://[::ffff:a00:1]",
      "http://[fe80::1]",
      "http://172.31.255.255",
      "http://100.64.0.1",
    ]
  ) {
    assert.equal(isRemoteUrl(url), false, url);
  }
  for (
    const url of [
      "https://8.8.8.8",
      "https://api.example.com",
      "http://[2001:4860::1]",
      "http://[::ffff:8.8.8.8]",
      "http://172.32.0.1",
      "not a url",
    ]
  ) {
    assert.equal(isRemoteUrl(url), true, url);
  }
});

Deno.test("tools.pinned sits beside the tool policy without making one, and is checked", () => {
  const parsed = servers(`
  pinned:
    transport: stdio
    command: npx
    public: true
    tools: { pinned: { search: "SHA256:${DIGEST.toUpperCase()}" } }
`);
  const server = parsed.get("pinned")!;
  assert.deepEqual(server.toolPins, { search: DIGEST });
  assert.equal(server.tools, undefined, "pins alone filter no tool");

  assert.deepEqual(
    problems(`
  bad:
    transport: stdio
    command: npx
    public: true
    toolChanges: sometimes
    tools: { pinned: { search: abc } }
`),
    [
      'servers.bad.toolChanges: unknown value "sometimes"',
      'servers.bad.tools.pinned.search: not a SHA-256 digest: "abc"',
    ],
  );
});

Deno.test("an aggregate refuses toolChanges and pins: its members' own apply", () => {
  const found = problems(`
  a: { transport: stdio, command: npx, public: true }
  both: { transport: aggregate, servers: [a], public: true, tools: { pinned: { x: "${DIGEST}" } } }
`);
  assert.ok(
    found.some((line) =>
      line.startsWith("servers.both.tools: toolChanges and tools.pinned are set on the members")
    ),
    found.join("\n"),
  );
});
