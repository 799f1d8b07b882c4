import assert from "node:assert/strict";
import type { ServerName } from "../core/ids.ts";
import { ConfigError, type ConfigIssue } from "./issues.ts";
import { parseConfigText } from "./load.ts";

const OIDC = `oauth:
  idp: { provider: oidc, issuer: "https://idp.example.com", clientId: g, clientSecret: s, groupsClaim: groups }
  allow: { domains: [example.com] }
baseUrl: https://gw.example.com
`;
const ENV: Record<string, string> = { PW: "a-long-enough-password" };

function issuesOf(yaml: string): ConfigIssue[] {
  try {
    parseConfigText(yaml, (name) => ENV[name], "config.yaml");
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.issues;
  }
  assert.fail("the document was accepted");
}

/** Each issue as "path (line): message — hint". */
/** The warnings about servers (an https baseUrl adds one about trustedProxies, not looked at here). */
const serverWarnings = (issues: ConfigIssue[]) => issues.filter((i) => i.path[0] === "servers");

const shown = (issues: ConfigIssue[]) =>
  issues.map((i) => `${i.path.join(".")} (${i.line}): ${i.message} — ${i.hint ?? ""}`);

Deno.test("parseServers() reports every access, tools, serviceAuths and requestTimeout problem with path, line and hint", () => {
  const rows: { yaml: string; issues: string[] }[] = [
    {
      yaml: `${OIDC}servers:
  a:
    transport: stdio
    command: x
    access: {}
`,
      issues: [
        "servers.a.access (9): admits nobody — list emails, domains or groups; or remove access: to admit everyone who may sign in",
      ],
    },
    {
      yaml: `${OIDC}servers:
  a:
    transport: stdio
    command: x
    access:
      domains: ["@example.com"]
      emails: [nobody]
`,
      issues: [
        'servers.a.access.emails.0 (11): not an email address: "nobody" — ',
        'servers.a.access.domains.0 (10): not a domain: "@example.com" — write "example.com", without the @',
      ],
    },
    {
      yaml: `servers:
  a:
    transport: stdio
    command: x
    public: true
    access: { emails: [a@example.com] }
`,
      issues: [
        "servers.a.access (6): a public server has no callers to check — remove public: true and configure oauth: or serviceAuths:, or remove access:",
      ],
    },
    {
      yaml: `${OIDC}servers:
  a:
    transport: stdio
    command: x
    tools:
      allow: ["get_[a-z]*", "get_.*"]
      deny: ["!write_*", "delete all"]
      rules:
        - tools: []
          access: { groups: [editors] }
        - tools: [write_*]
`,
      issues: [
        'servers.a.tools.allow.0 (10): not a tool pattern: "get_[a-z]*" — write a tool name, with * for any characters and ? for one (e.g. get_*); no spaces, brackets, braces or regular expressions',
        'servers.a.tools.deny.0 (11): not a tool pattern: "!write_*" — list the tools to hide under deny: instead',
        'servers.a.tools.deny.1 (11): not a tool pattern: "delete all" — write a tool name, with * for any characters and ? for one (e.g. get_*); no spaces, brackets, braces or regular expressions',
        'servers.a.tools.rules.0.tools (13): names no tools — e.g. tools: ["write_*"]',
        "servers.a.tools.rules.1.access (15): is required — say who may use these tools, e.g. { groups: [editors] }",
      ],
    },
    {
      yaml: `servers:
  a:
    transport: stdio
    command: x
    requestTimeout: soon
    serviceAuths:
      - { type: digest }
      - { type: basic, username: "ci:bot", password: short }
      - { type: basic, username: ci }
      - { type: basic, username: ci, password: "\${PW}" }
      - { type: bearer, tokens: [t], username: ci }
`,
      issues: [
        'servers.a.serviceAuths.0.type (7): unsupported auth type "digest" — use "bearer" or "basic"',
        `servers.a.serviceAuths.1.username (8): not a usable username: "ci:bot" — use up to 64 visible ASCII characters without ':' or spaces (HTTP Basic cannot carry a ':' in it)`,
        "servers.a.serviceAuths.1.password (8): is shorter than 16 characters — generate one, e.g. openssl rand -base64 24, and give it from the environment",
        "servers.a.serviceAuths.2.password (9): is required — e.g. password: ${CI_PASSWORD}",
        'servers.a.serviceAuths.3.username (10): "ci" is used twice — give each its own',
        'servers.a.serviceAuths.4.username (11): unknown key "username" — allowed here: type, tokens, groups',
        'servers.a.requestTimeout (5): expected a duration, got "soon" — write e.g. "30s", "5m", "1h"',
      ],
    },
  ];
  for (const { yaml, issues } of rows) {
    assert.deepEqual(shown(issuesOf(yaml)), issues, yaml);
  }
});

Deno.test("parseConfigText() refuses groupsClaim where the provider names no groups of its own", () => {
  const rows: [string, string][] = [
    [
      "google",
      "oauth.idp.groupsClaim (3): Google's sign-in names no groups — admit people by domains or emails, or sign in through an oidc provider that emits groups (Keycloak, Okta, Entra ID)",
    ],
    [
      "github",
      "oauth.idp.groupsClaim (3): is not used with provider github — GitHub's organisations and teams are the groups (org and org/team-slug); remove groupsClaim",
    ],
  ];
  for (const [provider, issue] of rows) {
    const yaml = `baseUrl: https://gw.example.com
oauth:
  idp: { provider: ${provider}, clientId: g, clientSecret: s, groupsClaim: groups }
  allow: { domains: [example.com] }
servers: { a: { transport: stdio, command: x } }
`;
    assert.deepEqual(shown(issuesOf(yaml)), [issue], provider);
  }
});

Deno.test("parseConfigText() resolves access, tools, service credentials and requestTimeout, for every kind of server", () => {
  const config = parseConfigText(
    `${OIDC}servers:
  files:
    transport: stdio
    command: x
    access: { emails: [Alice@Example.COM], domains: [Example.com], groups: [Editors] }
    tools:
      allow: ["get_*", echo]
      deny: [delete_*]
      rules: [{ tools: [write_*], access: { groups: [editors] } }]
    serviceAuths:
      - { type: bearer, tokens: [t0123456789], groups: [Editors] }
      - { type: basic, username: ci, password: "\${PW}", groups: [ci] }
    requestTimeout: 90s
  remote:
    transport: streamable-http
    url: http://127.0.0.1:9/mcp
    tools: {}
  all:
    transport: aggregate
    access: { groups: [editors] }
    tools: { deny: ["*.delete_*"] }
    requestTimeout: 2m
`,
    (name) => ENV[name],
  );
  const files = config.servers.get("files" as ServerName)!;
  assert.deepEqual(files.access, {
    emails: ["alice@example.com"],
    domains: ["example.com"],
    groups: ["Editors"],
  });
  assert.deepEqual(files.tools, {
    allow: ["get_*", "echo"],
    deny: ["delete_*"],
    rules: [{ tools: ["write_*"], access: { emails: [], domains: [], groups: ["editors"] } }],
  });
  assert.deepEqual(files.serviceAuths.map((auth) => [auth.type, auth.groups]), [
    ["bearer", ["Editors"]],
    ["basic", ["ci"]],
  ]);
  const basic = files.serviceAuths[1];
  assert.ok(basic.type === "basic");
  assert.equal(basic.username, "ci");
  assert.equal(basic.password.reveal(), ENV.PW);
  assert.equal(String(basic.password), "***");
  assert.equal(files.requestTimeoutMs, 90_000);
  // `tools: {}` says nothing: the server has no tools policy at all.
  const remote = config.servers.get("remote" as ServerName)!;
  assert.equal("tools" in remote, false);
  assert.equal("access" in remote, false);
  const all = config.servers.get("all" as ServerName)!;
  assert.deepEqual(all.tools, { deny: ["*.delete_*"], rules: [] });
  assert.equal(all.requestTimeoutMs, 120_000);
});

Deno.test("parseConfigText() compares GitHub's groups lower-cased, in access, rules and service credentials", () => {
  const config = parseConfigText(
    `baseUrl: https://gw.example.com
oauth:
  idp: { provider: github, clientId: g, clientSecret: s }
  allow: { orgs: [acme] }
servers:
  a:
    transport: stdio
    command: x
    access: { groups: [Acme/Platform] }
    tools: { rules: [{ tools: [x], access: { groups: [ACME] } }] }
    serviceAuths: [{ type: bearer, tokens: [t0123456789], groups: [Acme/Platform] }]
`,
    () => undefined,
  );
  const server = config.servers.get("a" as ServerName)!;
  assert.deepEqual(server.access?.groups, ["acme/platform"]);
  assert.deepEqual(server.tools?.rules[0].access.groups, ["acme"]);
  assert.deepEqual(server.serviceAuths[0].groups, ["acme/platform"]);
  assert.deepEqual(serverWarnings(config.warnings), []);
});

Deno.test("parseConfigText() warns of groups no caller can bring, credentials access refuses, and allow: []", () => {
  const config = parseConfigText(
    `baseUrl: https://gw.example.com
oauth:
  idp: { provider: google, clientId: g, clientSecret: s }
  allow: { domains: [example.com] }
servers:
  a:
    transport: stdio
    command: x
    access: { groups: [editors] }
    tools:
      allow: []
      rules: [{ tools: [x], access: { groups: [admins] } }]
  b:
    transport: stdio
    command: x
    access: { domains: [example.com], groups: [ci] }
    serviceAuths:
      - { type: bearer, tokens: [t0123456789], groups: [ci] }
      - { type: bearer, tokens: [u0123456789] }
  c:
    transport: stdio
    command: x
    tools: { rules: [{ tools: [x], access: { groups: [ci] } }] }
  all:
    transport: aggregate
    servers: [c]
    serviceAuths: [{ type: bearer, tokens: [v0123456789], groups: [ci] }]
`,
    () => undefined,
  );
  assert.deepEqual(shown(serverWarnings(config.warnings)), [
    'servers.a.tools.allow (11): allows no tool: callers see none — list the tools to show (e.g. ["get_*"]), or remove allow: to show every tool not denied',
    "servers.a.access.groups (9): no caller can bring these groups, so they never admit — groups come from oauth.idp.groupsClaim (oidc, azure), GitHub's organisations and teams, or a serviceAuths entry's groups",
    "servers.a.tools.rules.0.access.groups (12): no caller can bring these groups, so they never admit — groups come from oauth.idp.groupsClaim (oidc, azure), GitHub's organisations and teams, or a serviceAuths entry's groups",
    "servers.b.serviceAuths.1 (19): its callers pass no rule of this server's access, so they are refused — give it groups: that access.groups lists (ci); service credentials have no email address",
  ]);
});
