import assert from "node:assert/strict";
import { ConfigError } from "./issues.ts";
import { parseConfigText } from "./load.ts";

const env = (vars: Record<string, string>) => (name: string) => vars[name];

function issuesOf(yaml: string, vars: Record<string, string> = {}) {
  try {
    parseConfigText(yaml, env(vars), "config.yaml");
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return error;
  }
  assert.fail("expected a ConfigError");
}

Deno.test("parseConfigText() fills every default and substitutes ${ENV}", () => {
  const config = parseConfigText(
    `
servers:
  demo:
    transport: stdio
    command: deno
    serviceAuths: [{ type: bearer, tokens: ["\${TOKEN}", "\${OTHER:-fallback}"] }]
`,
    env({ TOKEN: "from-env" }),
  );
  assert.deepEqual(config.listen, { hostname: "127.0.0.1", port: 8080 });
  assert.equal(config.baseUrl, "http://127.0.0.1:8080");
  assert.equal(config.limits.maxMessageBytes, 4 * 1024 * 1024);
  assert.equal(config.limits.sessionIdleTimeoutMs, 300_000);
  const auth = config.servers.get("demo" as never)!.serviceAuths[0];
  assert.equal(auth.type, "bearer");
  assert.deepEqual(auth.tokens.map((t) => t.reveal()), ["from-env", "fallback"]);
  assert.equal(JSON.stringify(auth), '{"type":"bearer","tokens":["***","***"],"groups":[]}');
});

Deno.test("parseConfigText() reports every error with its path, line and a hint", () => {
  const error = issuesOf(`listen: nowhere
limits:
  requestTimeout: soon
  sesionsPerUser: 3
servers:
  open:
    transport: stdio
    command: deno
  remote:
    transport: streamable-http
    url: \${REMOTE_URL}
    public: true
  weird:
    transport: carrier-pigeon
`);
  const lines = error.issues.map((i) => [i.path.join("."), i.line, i.message]);
  assert.deepEqual(lines, [
    ["servers.remote.url", 11, "environment variable REMOTE_URL is not set"],
    ["listen", 1, 'expected host:port, got "nowhere"'],
    ["servers.open", 6, "has no authentication"],
    // Not also 'not an http(s) URL: "${REMOTE_URL}"': the missing variable says it all.
    ["servers.weird.transport", 14, 'unknown transport "carrier-pigeon"'],
    // The rest of an entry is checked even without a transport.
    ["servers.weird", 13, "has no authentication"],
    ["limits.sesionsPerUser", 4, 'unknown key "sesionsPerUser"'],
    ["limits.requestTimeout", 3, 'expected a duration, got "soon"'],
  ]);
  assert.equal(
    error.issues.find((i) => i.path.join(".") === "limits.sesionsPerUser")?.hint,
    'did you mean "sessionsPerUser"?',
  );
  assert.match(
    error.message,
    /config\.yaml:6 servers\.open: has no authentication\n\s+hint: configure oauth:, add serviceAuths/,
  );
});

Deno.test("parseConfigText() reports YAML syntax errors with their line", () => {
  const error = issuesOf("servers:\n  demo: [unclosed\n");
  assert.equal(error.issues.length >= 1, true);
  assert.match(error.issues[0].message, /^YAML syntax/);
  assert.equal(typeof error.issues[0].line, "number");
});

Deno.test("parseConfigText() reports only the first YAML syntax error, with a hint for an unquoted {{", () => {
  // In a flow mapping the parser stumbles over every token after the first `{` (64 follow-on
  // errors on this line alone); the person needs the first one and what caused it.
  const error = issuesOf(`servers:
  demo:
    transport: streamable-http
    url: http://127.0.0.1:9/mcp
    headers: { Authorization: Bearer {{user.token}} }
    public: true
`);
  assert.equal(error.issues.length, 1);
  assert.equal(error.issues[0].line, 5);
  assert.match(error.issues[0].message, /^YAML syntax: .*more errors after it/);
  assert.match(error.issues[0].hint ?? "", /quote a value with \{\{…\}\}/);
  // A quoted placeholder on the line with another mistake is not blamed.
  const other = issuesOf(`servers:
  demo: { url: "{{user.token}}" ]
`);
  assert.equal(other.issues.length, 1);
  assert.equal(other.issues[0].hint, "check indentation and quoting around this line");
});

Deno.test("parseConfigText() hints at quoting when an unquoted {{…}} became a mapping", () => {
  const error = issuesOf(`servers:
  demo:
    transport: stdio
    command: x
    env:
      TOKEN: {{user.token}}
    public: true
`);
  const issue = error.issues.find((i) => i.path.join(".") === "servers.demo.env.TOKEN");
  assert.ok(issue, error.message);
  assert.equal(issue.line, 6);
  assert.match(issue.message, /got a mapping/);
  assert.match(issue.hint ?? "", /quote a value with/);
});

Deno.test("parseConfigText() refuses short secrets, bad placeholders and bad names", () => {
  const error = issuesOf(`secret: too-short
servers:
  Bad/Name:
    transport: stdio
    command: x
    args: ["{{user.password}}"]
    public: true
`);
  const messages = error.issues.map((i) => i.message);
  assert.ok(messages.includes("is shorter than 32 bytes"));
  assert.ok(messages.includes('invalid server name "Bad/Name"'));
  assert.ok(messages.includes('unknown placeholder "{{user.password}}"'));
  assert.ok(!error.message.includes("too-short"), "a secret never appears in errors");
});

Deno.test("parseConfigText() reports every oauth problem with its path", () => {
  const yaml = `
baseUrl: http://gw.example.com
servers:
  a: { transport: stdio, command: x }
oauth:
  accesTokenTtl: 1h
  idp: { provider: okta, clientId: gh }
  allow: { domains: ["not a domain"] }
`;
  const error = issuesOf(yaml);
  const text = error.issues.map((i) => `${i.path.join(".")}: ${i.message} ${i.hint ?? ""}`)
    .join("\n");
  assert.match(text, /oauth\.accesTokenTtl: unknown key .*did you mean "accessTokenTtl"/);
  assert.match(text, /oauth\.idp\.provider: unknown provider "okta"/);
  assert.match(text, /oauth\.idp\.clientSecret: is required/);
  assert.match(text, /oauth\.allow\.domains\.0: not a domain/);
  assert.match(text, /baseUrl: must be https when oauth is configured/);
  assert.doesNotMatch(text, /servers\.a: has no authentication/);
});

Deno.test("parseConfigText() resolves google and azure to their issuers; refuses a shared Entra tenant", () => {
  const with_ = (idp: string) =>
    `baseUrl: https://gw.example.com
servers: { a: { transport: stdio, command: x } }
oauth:
  idp: ${idp}
  allow: { domains: [example.com] }
`;
  const google = parseConfigText(
    with_("{ provider: google, clientId: g, clientSecret: s }"),
    () => undefined,
  );
  assert.equal(google.oauth?.idp.issuer, "https://accounts.google.com");
  assert.deepEqual(google.oauth?.idp.scopes, ["openid", "email", "profile"]);
  const azure = parseConfigText(
    with_("{ provider: azure, tenant: contoso.onmicrosoft.com, clientId: a, clientSecret: s }"),
    () => undefined,
  );
  assert.equal(
    azure.oauth?.idp.issuer,
    "https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0",
  );
  assert.throws(
    () =>
      parseConfigText(
        with_("{ provider: azure, tenant: common, clientId: a, clientSecret: s }"),
        () => undefined,
      ),
    /admits accounts from any tenant/,
  );
  assert.throws(
    () =>
      parseConfigText(
        with_("{ provider: oidc, issuer: http://idp.example.com, clientId: a, clientSecret: s }"),
        () => undefined,
      ),
    /oauth\.idp\.issuer: must be an https URL/,
  );
});

Deno.test("parseConfigText() checks aggregates: members, nesting, delimiter", () => {
  const yaml = `
servers:
  a_b: { transport: stdio, command: x, public: true }
  c: { transport: stdio, command: x, public: true }
  all: { transport: aggregate, servers: [c, ghost], public: true }
  nested: { transport: aggregate, servers: [all], public: true }
  under: { transport: aggregate, servers: [a_b], delimiter: "_", public: true }
  odd: { transport: aggregate, delimiter: "/", public: true }
`;
  const error = issuesOf(yaml);
  const text = error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("\n");
  assert.match(text, /servers\.all\.servers\.1: no server named "ghost"/);
  assert.match(text, /servers\.nested\.servers\.0: "all" is an aggregate itself/);
  assert.match(text, /servers\.under\.servers\.0: the name "a_b" contains the delimiter "_"/);
  assert.match(text, /servers\.odd\.delimiter: "\/" cannot separate member and tool names/);

  const ok = parseConfigText(
    `servers:
  a: { transport: stdio, command: x, public: true }
  b: { transport: sse, url: "http://b.internal/sse", public: true }
  all: { transport: aggregate, public: true }
`,
    () => undefined,
  );
  const all = ok.servers.get("all" as never)!;
  assert.equal(all.transport, "aggregate");
  if (all.transport === "aggregate") {
    assert.deepEqual(all.members, ["a", "b"], "default: every non-aggregate server");
    assert.equal(all.delimiter, ".");
    assert.equal(all.cacheTtlMs, 60_000);
  }
});

const OAUTH_SECTION = `oauth:
  idp: { provider: oidc, issuer: https://login.example.com, clientId: gh, clientSecret: s }
  allow: { domains: [example.com] }
`;

Deno.test("parseConfigText() resolves userToken for oauth and manual services", () => {
  const config = parseConfigText(
    `${OAUTH_SECTION}servers:
  linear:
    transport: streamable-http
    url: https://linear-mcp.internal/mcp
    headers: { Authorization: "Bearer {{user.token}}" }
    requiresUserToken: true
    userToken:
      kind: oauth
      displayName: Linear
      oauth:
        authorizationUrl: https://linear.app/oauth/authorize
        tokenUrl: https://api.linear.app/oauth/token
        revocationUrl: https://api.linear.app/oauth/revoke
        clientId: lin
        clientSecret: \${LINEAR_SECRET}
        scopes: [read]
  notion:
    transport: stdio
    command: notion-mcp
    env: { NOTION_TOKEN: "{{user.token}}" }
    requiresUserToken: true
    userToken: { kind: manual, displayName: Notion, pattern: "^(secret_|ntn_)" }
  plain:
    transport: stdio
    command: x
`,
    env({ LINEAR_SECRET: "linear-secret" }),
  );
  const linear = config.servers.get("linear" as never)!.userToken!;
  assert.equal(linear.kind, "oauth");
  if (linear.kind !== "oauth") return;
  assert.equal(linear.tokenUrl, "https://api.linear.app/oauth/token");
  assert.equal(linear.clientSecret?.reveal(), "linear-secret");
  assert.deepEqual(linear.scopes, ["read"]);
  assert.deepEqual(config.servers.get("notion" as never)!.userToken, {
    kind: "manual",
    displayName: "Notion",
    instructions: undefined,
    pattern: "^(secret_|ntn_)",
  });
  assert.equal(config.servers.get("plain" as never)!.userToken, undefined);
});

Deno.test("parseConfigText() reports every userToken problem with its path", () => {
  const error = issuesOf(`${OAUTH_SECTION}servers:
  leaky:
    transport: stdio
    command: x
    env: { TOKEN: "{{user.token}}" }
  unused:
    transport: stdio
    command: x
    requiresUserToken: true
  halfway:
    transport: streamable-http
    url: https://svc.internal/mcp
    headers: { Authorization: "Bearer {{user.token}}" }
    requiresUserToken: true
    userToken:
      kind: oauth
      oauth: { authorizationUrl: "http://svc.example.com/authorize", clientId: c }
  badpattern:
    transport: stdio
    command: x
    args: ["{{user.token}}"]
    requiresUserToken: true
    userToken: { kind: manual, pattern: "(" }
  both:
    transport: aggregate
    requiresUserToken: true
`);
  const text = error.issues.map((i) => `${i.path.join(".")}: ${i.message} ${i.hint ?? ""}`)
    .join("\n");
  assert.match(text, /servers\.leaky: uses \{\{user\.token\}\} without requiresUserToken: true/);
  assert.match(text, /servers\.unused: requires a user token but never passes it to the backend/);
  assert.match(text, /servers\.halfway\.userToken\.oauth\.authorizationUrl: must be an https URL/);
  assert.match(
    text,
    /servers\.halfway\.userToken\.oauth\.tokenUrl: is required with authorizationUrl/,
  );
  assert.match(text, /servers\.badpattern\.userToken\.pattern: not a regular expression/);
  assert.match(text, /servers\.both\.requiresUserToken: is set on the members of an aggregate/);
});

Deno.test("parseConfigText() refuses requiresUserToken without oauth", () => {
  const error = issuesOf(`servers:
  notion:
    transport: stdio
    command: x
    env: { T: "{{user.token}}" }
    serviceAuths: [{ type: bearer, tokens: [abcdefabcdef] }]
    requiresUserToken: true
`);
  assert.deepEqual(error.issues.map((i) => [i.path.join("."), i.message]), [
    ["servers.notion.requiresUserToken", "needs oauth: configured"],
  ]);
});

Deno.test("parseConfigText() fills rate limit defaults, accepts off, and reports bad rates", () => {
  const config = parseConfigText(
    `rateLimits: { tokenPerClient: "off", mcpPerUser: 20/s }
servers:
  demo: { transport: stdio, command: deno, public: true }
`,
    env({}),
  );
  assert.deepEqual(config.rateLimits, {
    mcpPerUser: { count: 20, perMs: 1_000 },
    mcpPerClient: { count: 3000, perMs: 60_000 },
    oauthPerAddress: { count: 300, perMs: 60_000 },
    tokenFailuresPerAddress: { count: 20, perMs: 60_000 },
    registerPerAddress: { count: 60, perMs: 3_600_000 },
  });
  const error = issuesOf(`rateLimits: { mcpPerUser: fast, registerPerAdress: 1/s }
servers:
  demo: { transport: stdio, command: deno, public: true }
`);
  assert.deepEqual(error.issues.map((i) => [i.path.join("."), i.message, i.hint]), [
    [
      "rateLimits.registerPerAdress",
      'unknown key "registerPerAdress"',
      'did you mean "registerPerAddress"?',
    ],
    [
      "rateLimits.mcpPerUser",
      'expected a rate, got "fast"',
      'write e.g. "600/min", "20/s", "100/hour", or off',
    ],
  ]);
});

Deno.test("parseConfigText() reports an unparsable baseUrl with oauth as a config error (found by the fuzzer)", () => {
  const error = issuesOf(`baseUrl: "http://127.0.0.1:8080 <%00.."
${OAUTH_SECTION}servers:
  demo: { transport: stdio, command: deno }
`);
  assert.deepEqual(error.issues.map((i) => [i.path.join("."), i.message]), [
    ["baseUrl", 'not a URL: "http://127.0.0.1:8080 <%00.."'],
  ]);
});

Deno.test("parseConfigText() sizes the stream buffer from maxMessageBytes and refuses one too small", () => {
  const server = `
servers:
  demo: { transport: stdio, command: deno, public: true }
`;
  assert.equal(parseConfigText(server, env({})).limits.maxStreamBufferBytes, 8 * 1_048_576);
  const big = parseConfigText(`limits: { maxMessageBytes: 16MiB }${server}`, env({}));
  assert.equal(big.limits.maxStreamBufferBytes, 32 * 1_048_576);
  const error = issuesOf(`limits: { maxMessageBytes: 1MiB, maxStreamBuffer: 1MiB }${server}`);
  assert.deepEqual(error.issues.map((i) => [i.path.join("."), i.message, i.hint]), [[
    "limits.maxStreamBuffer",
    "must be at least twice limits.maxMessageBytes (2097152 bytes)",
    "raise it, or leave it out to get the smallest that fits",
  ]]);
});

Deno.test("parseConfigText() resolves forwardRoots (true unless said) and refuses a non-boolean", () => {
  const config = parseConfigText(
    `
servers:
  open: { transport: stdio, command: deno, public: true }
  files: { transport: stdio, command: deno, public: true, forwardRoots: false }
  remote: { transport: streamable-http, url: "http://127.0.0.1:9/mcp", public: true, forwardRoots: false }
`,
    env({}),
  );
  const forwards = (name: string) =>
    (config.servers.get(name as never) as { forwardRoots: boolean }).forwardRoots;
  assert.deepEqual([forwards("open"), forwards("files"), forwards("remote")], [true, false, false]);
  const error = issuesOf(`
servers:
  files: { transport: stdio, command: deno, public: true, forwardRoots: "no" }
`);
  assert.deepEqual(error.issues.map((i) => [i.path.join("."), i.message]), [
    ["servers.files.forwardRoots", 'expected true or false, got "no"'],
  ]);
});

Deno.test("parseConfigText() keeps the ${ENV} values a backend is given as its secret values", () => {
  const config = parseConfigText(
    `
servers:
  db:
    transport: stdio
    command: "\${MCP_BIN}"
    args: [--key, "\${ARG_KEY}"]
    env: { DATABASE_URL: "postgres://app:\${DB_PASSWORD}@db/app", MODE: "\${MODE:-ro}" }
    serviceAuths: [{ type: bearer, tokens: ["\${CLIENT_TOKEN}"] }]
  api:
    transport: streamable-http
    url: "http://127.0.0.1:9/mcp?tenant=\${TENANT}"
    headers: { X-Api-Key: "\${API_KEY}" }
    public: true
`,
    env({
      MCP_BIN: "/usr/local/bin/db-mcp",
      ARG_KEY: "arg-key-value",
      DB_PASSWORD: "db-password-value",
      CLIENT_TOKEN: "client-token-value",
      TENANT: "tenant-value",
      API_KEY: "api-key-value",
    }),
  );
  const secrets = (name: string) =>
    (config.servers.get(name as never) as { secretValues: { reveal(): string }[] })
      .secretValues.map((secret) => secret.reveal());
  // The command, the defaults written in the file and the gateway's own tokens are not given
  // to the backend as secrets.
  assert.deepEqual(secrets("db"), ["arg-key-value", "db-password-value"]);
  assert.deepEqual(secrets("api"), ["tenant-value", "api-key-value"]);
});

Deno.test("parseConfigText() warns, and still accepts, when a stdio server's args carry {{user.token}}", () => {
  const config = parseConfigText(
    `${OAUTH_SECTION}servers:
  inargs:
    transport: stdio
    command: x
    args: [--verbose, "--token={{ user.token }}"]
    requiresUserToken: true
  inenv:
    transport: stdio
    command: x
    args: ["--user={{user.email}}"]
    env: { TOKEN: "{{user.token}}" }
    requiresUserToken: true
`,
    env({}),
    "config.yaml",
  );
  assert.deepEqual(config.warnings, [{
    path: ["servers", "inargs", "args", 1],
    message: "puts the person's token on the backend's command line",
    hint: "pass it in env: instead; args are visible to every local user in ps",
    line: 8,
  }]);
});

Deno.test("parseConfigText() reads oauth.allow.groups: GitHub's lower-cased, refused where no groups can arrive", () => {
  const with_ = (idp: string, groups: string) =>
    `baseUrl: https://gw.example.com
servers: { a: { transport: stdio, command: x } }
oauth:
  idp: ${idp}
  allow: { groups: ${groups} }
`;
  const github = parseConfigText(
    with_("{ provider: github, clientId: g, clientSecret: s }", "[Acme, Acme/Platform-Team]"),
    () => undefined,
  );
  assert.deepEqual(github.oauth?.allow.groups, ["acme", "acme/platform-team"]);
  const text = (yaml: string) =>
    issuesOf(yaml).issues.map((i) => `${i.path.join(".")}: ${i.message} (${i.hint})`).join("\n");
  assert.match(
    text(with_("{ provider: google, clientId: g, clientSecret: s }", "[staff]")),
    /oauth\.allow\.groups: Google names no groups at sign-in \(admit your Workspace domain/,
  );
  assert.match(
    text(
      with_(
        "{ provider: oidc, issuer: https://idp.example.com, clientId: g, clientSecret: s }",
        "[Staff]",
      ),
    ),
    /oauth\.allow\.groups: no groups reach the gateway without oauth\.idp\.groupsClaim \(set oauth\.idp\.groupsClaim/,
  );
  assert.match(
    text(with_("{ provider: github, clientId: g, clientSecret: s }", '[""]')),
    /oauth\.allow\.groups\.0: is empty/,
  );
});
