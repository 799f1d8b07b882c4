import assert from "node:assert/strict";
import { ConfigError, type ConfigIssue } from "./issues.ts";
import { parseConfigText } from "./load.ts";
import type { StdioServerConfig } from "./types.ts";

function load(server: string) {
  return parseConfigText(
    `servers:\n  fx:\n    transport: stdio\n    command: x\n    public: true\n${server}`,
    () => undefined,
    "config.yaml",
  );
}

function issuesOf(server: string): string[] {
  try {
    load(server);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.issues.map((issue: ConfigIssue) => `${issue.path.join(".")}: ${issue.message}`);
  }
  assert.fail("the document was accepted");
}

Deno.test("parseShare() resolves share, processes and processIdleTimeout with their defaults", () => {
  const plain = load("").servers.get("fx" as never) as StdioServerConfig;
  assert.deepEqual([plain.share, plain.processes, plain.processIdleTimeoutMs], [
    "session",
    1,
    300_000,
  ]);
  const pooled = load("    share: all\n    processes: 3\n    processIdleTimeout: 30s\n");
  const server = pooled.servers.get("fx" as never) as StdioServerConfig;
  assert.deepEqual([server.share, server.processes, server.processIdleTimeoutMs], [
    "all",
    3,
    30_000,
  ]);
  assert.deepEqual(pooled.warnings.map((warning) => warning.path.join(".")), ["servers.fx.share"]);
  const person = load('    share: person\n    args: ["--user={{user.id}}"]\n');
  assert.deepEqual(person.warnings, [], "a person's own process may carry their values");
});

Deno.test("parseShare() refuses what a shared process cannot do, each with its path", () => {
  assert.deepEqual(issuesOf('    share: all\n    env: { OWNER: "{{ user.email }}" }\n'), [
    "servers.fx.env.OWNER: share: all cannot carry one person's values: uses {{user.*}} placeholders",
  ]);
  assert.deepEqual(issuesOf('    share: all\n    env: { TEAMS: "{{user.groups}}" }\n'), [
    "servers.fx.env.TEAMS: share: all cannot carry one person's values: uses {{user.*}} placeholders",
  ]);
  assert.deepEqual(issuesOf("    share: everyone\n"), [
    'servers.fx.share: unknown share mode "everyone"',
  ]);
  assert.deepEqual(issuesOf("    share: person\n    processes: 2\n"), [
    "servers.fx.processes: processes applies only with share: all",
  ]);
  assert.deepEqual(issuesOf("    share: person\n    protocol: 2026-07-28\n"), [
    "servers.fx.share: share: person needs a backend that speaks MCP 2025-11-25",
  ]);
});
