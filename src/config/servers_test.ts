import assert from "node:assert/strict";
import { parse } from "yaml";
import { Secret } from "../core/secret.ts";
import { Checker } from "./checker.ts";
import { ConfigError, type ConfigIssue } from "./issues.ts";
import { parseConfigText } from "./load.ts";
import { parseServers } from "./servers.ts";

const OAUTH = `oauth:
  idp: { provider: oidc, issuer: "https://idp.example.com", clientId: g, clientSecret: s }
  allow: { domains: [example.com] }
`;

/** Every issue of a document, with the line the loader finds for it (lines come from the YAML). */
function issuesOf(yaml: string): ConfigIssue[] {
  try {
    parseConfigText(yaml, () => undefined, "config.yaml");
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.issues;
  }
  assert.fail("the document was accepted");
}

/** Secrets shown by value, so that an assertion compares what they hold. */
function revealed(value: unknown): unknown {
  if (value instanceof Secret) return { secret: value.reveal() };
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [k, revealed(v)]));
  if (Array.isArray(value)) return value.map(revealed);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, revealed(v)]));
  }
  return value;
}

Deno.test("parseServers() reports a malformed server of each kind with its path, line and hint", () => {
  const cases: { kind: string; yaml: string; issues: ConfigIssue[] }[] = [
    {
      kind: "stdio without a command",
      yaml: `servers:
  files:
    transport: stdio
    public: true
    args: [--root, /srv]
`,
      issues: [{
        path: ["servers", "files", "command"],
        message: "is required",
        hint: "the program to start, e.g. npx",
        line: 2,
      }],
    },
    {
      kind: "stdio with an unknown placeholder",
      yaml: `servers:
  files:
    transport: stdio
    public: true
    command: npx
    env:
      HOME: "{{user.home}}"
`,
      issues: [{
        path: ["servers", "files", "env", "HOME"],
        message: 'unknown placeholder "{{user.home}}"',
        hint: "available: {{user.id}}, {{user.email}}, {{user.groups}}, {{user.token}}",
        line: 7,
      }],
    },
    {
      kind: "streamable-http with a misspelt key",
      yaml: `servers:
  remote:
    transport: streamable-http
    public: true
    url: https://mcp.example.com/mcp
    header: { X-Team: core }
`,
      issues: [{
        path: ["servers", "remote", "header"],
        message: 'unknown key "header"',
        hint: 'did you mean "headers"?',
        line: 6,
      }],
    },
    {
      kind: "sse with a URL that is not http(s)",
      yaml: `servers:
  legacy:
    transport: sse
    serviceAuths: [{ type: bearer, tokens: [ci-token] }]
    url: ftp://mcp.example.com/sse
`,
      issues: [{
        path: ["servers", "legacy", "url"],
        message: 'not an http(s) URL: "ftp://mcp.example.com/sse"',
        hint: undefined,
        line: 5,
      }],
    },
    {
      kind: "aggregate naming a server that does not exist",
      yaml: `servers:
  files: { transport: stdio, command: npx, public: true }
  all:
    transport: aggregate
    public: true
    servers:
      - files
      - nope
`,
      issues: [{
        path: ["servers", "all", "servers", 1],
        message: 'no server named "nope"',
        hint: "configured: files",
        line: 8,
      }],
    },
    {
      kind: "aggregate with a delimiter tool names cannot hold",
      yaml: `servers:
  files: { transport: stdio, command: npx, public: true }
  all:
    transport: aggregate
    public: true
    delimiter: "::::"
`,
      issues: [{
        path: ["servers", "all", "delimiter"],
        message: '"::::" cannot separate member and tool names',
        hint: "use 1 to 3 characters from A-Z a-z 0-9 _ . - (tool names allow only those)",
        line: 6,
      }],
    },
    {
      kind: "userToken of kind oauth without its oauth block",
      yaml: `${OAUTH}servers:
  linear:
    transport: streamable-http
    url: https://mcp.linear.app/mcp
    headers: { Authorization: "Bearer {{user.token}}" }
    requiresUserToken: true
    userToken:
      kind: oauth
`,
      issues: [{
        path: ["servers", "linear", "userToken", "oauth"],
        message: "is required with kind: oauth",
        hint: "give issuer:, or the endpoint URLs",
        line: 10,
      }],
    },
    {
      kind: "userToken keys on an aggregate (refused twice: unknown there, and belongs on members)",
      yaml: `${OAUTH}servers:
  files: { transport: stdio, command: npx }
  all:
    transport: aggregate
    requiresUserToken: true
`,
      issues: [{
        path: ["servers", "all", "requiresUserToken"],
        message: 'unknown key "requiresUserToken"',
        hint:
          "allowed here: transport, public, serviceAuths, access, tools, approvals, requestTimeout, description, servers, delimiter, cacheTtl",
        line: 8,
      }, {
        path: ["servers", "all", "requiresUserToken"],
        message: "is set on the members of an aggregate, not on the aggregate",
        hint: "move it to the member servers that need a person's credential",
        line: 8,
      }],
    },
    {
      kind: "protocol 2026-07-28 on a legacy sse backend",
      yaml: `servers:
  legacy:
    transport: sse
    public: true
    url: https://legacy.example.com/sse
    protocol: 2026-07-28
`,
      issues: [{
        path: ["servers", "legacy", "protocol"],
        message: "a legacy sse backend cannot speak MCP 2026-07-28",
        hint:
          "use transport: streamable-http with the server's /mcp URL for a 2026-07-28 server, or say protocol: 2025-11-25 (or auto)",
        line: 6,
      }],
    },
    {
      kind: "an unknown protocol",
      yaml: `servers:
  files: { transport: stdio, public: true, command: npx, protocol: "2026" }
`,
      issues: [{
        path: ["servers", "files", "protocol"],
        message: 'unknown protocol "2026"',
        hint: "one of: auto, 2025-11-25, 2026-07-28",
        line: 2,
      }],
    },
  ];
  for (const { kind, yaml, issues } of cases) {
    assert.deepEqual(issuesOf(yaml), issues, kind);
  }
});

Deno.test("parseServers() resolves protocol: auto unless said, and either revision on stdio and streamable-http", () => {
  const c = new Checker();
  const servers = parseServers(
    c,
    parse(`
files: { transport: stdio, command: npx, public: true }
modern: { transport: stdio, command: npx, public: true, protocol: 2026-07-28 }
remote: { transport: streamable-http, url: "https://x.example/mcp", public: true, protocol: 2026-07-28 }
legacy: { transport: sse, url: "https://x.example/sse", public: true, protocol: 2025-11-25 }
`),
    { oauthConfigured: false, substitutions: [] },
  );
  assert.deepEqual(c.issues, []);
  const protocols = [...servers.values()].map((server) =>
    server.transport === "aggregate" ? undefined : server.protocol
  );
  assert.deepEqual(protocols, ["auto", "2026-07-28", "2026-07-28", "2025-11-25"]);
});

Deno.test("parseServers() resolves a valid server of each kind with its defaults filled", () => {
  const yaml = `
files:
  transport: stdio
  command: npx
  serviceAuths: [{ type: bearer, tokens: [ci-token] }]
remote:
  transport: streamable-http
  url: https://mcp.example.com/mcp
  public: true
legacy:
  transport: sse
  url: https://legacy.example.com/sse
  headers: { Authorization: "Bearer from-env" }
  public: true
notion:
  transport: stdio
  command: notion-mcp
  env: { NOTION_TOKEN: "{{user.token}}" }
  requiresUserToken: true
all:
  transport: aggregate
  public: true
`;
  const c = new Checker();
  const servers = parseServers(c, parse(yaml), {
    oauthConfigured: true,
    substitutions: [{ path: ["servers", "legacy", "headers", "Authorization"], value: "from-env" }],
  });
  assert.deepEqual(c.issues, []);
  assert.deepEqual(c.warnings, []);
  assert.deepEqual(revealed(servers), {
    files: {
      name: "files",
      public: false,
      serviceAuths: [{ type: "bearer", tokens: [{ secret: "ci-token" }], groups: [] }],
      forwardRoots: true,
      protocol: "auto",
      secretValues: [],
      toolChanges: "allow",
      toolChangesDefaulted: true,
      transport: "stdio",
      command: "npx",
      args: [],
      env: {},
      cwd: undefined,
      userToken: undefined,
      share: "session",
      processes: 1,
      processIdleTimeoutMs: 300_000,
    },
    remote: {
      name: "remote",
      public: true,
      serviceAuths: [],
      forwardRoots: true,
      protocol: "auto",
      secretValues: [],
      toolChanges: "hold",
      toolChangesDefaulted: true,
      transport: "streamable-http",
      url: "https://mcp.example.com/mcp",
      headers: {},
      identity: { headers: false, assertion: false },
      userToken: undefined,
    },
    legacy: {
      name: "legacy",
      public: true,
      serviceAuths: [],
      forwardRoots: true,
      protocol: "auto",
      secretValues: [{ secret: "from-env" }],
      toolChanges: "hold",
      toolChangesDefaulted: true,
      transport: "sse",
      url: "https://legacy.example.com/sse",
      headers: { Authorization: "Bearer from-env" },
      identity: { headers: false, assertion: false },
      userToken: undefined,
    },
    notion: {
      name: "notion",
      public: false,
      serviceAuths: [],
      forwardRoots: true,
      protocol: "auto",
      secretValues: [],
      toolChanges: "allow",
      toolChangesDefaulted: true,
      transport: "stdio",
      command: "notion-mcp",
      args: [],
      env: { NOTION_TOKEN: "{{user.token}}" },
      cwd: undefined,
      userToken: {
        kind: "manual",
        displayName: "notion",
        instructions: undefined,
        pattern: undefined,
      },
      share: "session",
      processes: 1,
      processIdleTimeoutMs: 300_000,
    },
    all: {
      name: "all",
      public: true,
      serviceAuths: [],
      transport: "aggregate",
      members: ["files", "remote", "legacy", "notion"],
      delimiter: ".",
      cacheTtlMs: 60_000,
      // Set by the validator and read by nothing; kept as it was.
      membersGiven: false,
    },
  });
});

Deno.test("identity.groups: glob patterns kept as written (lower-cased behind GitHub); a control character, a non-list, or a list beside nothing told is refused with its path", () => {
  const http = (identity: string, oauth = OAUTH) =>
    `baseUrl: https://gw.example.com\n${oauth}servers:\n  crm:\n    transport: streamable-http\n    url: https://crm.example.com/mcp\n    identity: ${identity}\n`;
  const read = (yaml: string) => {
    const config = parseConfigText(yaml, () => "0123456789abcdef0123456789abcdef", "config.yaml");
    const crm = config.servers.get("crm" as never);
    assert.ok(crm && crm.transport === "streamable-http");
    return crm.identity;
  };
  assert.deepEqual(read(http(`{ headers: true, groups: ["Eng-*", "R&D, ?aris"] }`)), {
    headers: true,
    assertion: false,
    groups: ["Eng-*", "R&D, ?aris"],
  });
  assert.equal(read(http("{ assertion: true }")).groups, undefined, "absent: every group");
  const github = `oauth:
  idp: { provider: github, clientId: g, clientSecret: s }
  allow: { orgs: [acme] }
`;
  assert.deepEqual(read(http(`{ assertion: true, groups: ["Acme/Eng-*"] }`, github)).groups, [
    "acme/eng-*",
  ]);
  const refused = (identity: string) =>
    issuesOf(http(identity)).map(({ path, message }) => [path.join("."), message]);
  assert.deepEqual(refused(`{ headers: true, groups: ["eng\\n*"] }`), [
    ["servers.crm.identity.groups.0", 'not a group pattern: "eng\n*"'],
  ]);
  assert.deepEqual(refused(`{ headers: true, groups: eng-* }`), [
    ["servers.crm.identity.groups", 'expected a list, got "eng-*"'],
  ]);
  assert.deepEqual(refused(`{ groups: [eng-*] }`), [
    ["servers.crm.identity.groups", "names the groups a backend is told, but it is told nothing"],
  ]);
});
