import assert from "node:assert/strict";
import { parseServerName } from "../core/ids.ts";
import { ConfigError, type ConfigIssue } from "./issues.ts";
import { parseConfigText } from "./load.ts";
import type { HttpServerConfig } from "./types.ts";

const OAUTH = `oauth:
  idp: { provider: oidc, issuer: "https://idp.example.com", clientId: g, clientSecret: s }
  allow: { domains: [example.com] }
`;

function load(servers: string) {
  return parseConfigText(
    `${OAUTH}servers:\n${servers}`,
    (name) => name === "TRACKER_SECRET" ? "tracker-secret-value" : undefined,
    "config.yaml",
  );
}

function server(config: ReturnType<typeof load>, name: string): HttpServerConfig {
  return config.servers.get(parseServerName(name)!) as HttpServerConfig;
}

function issuesOf(servers: string): ConfigIssue[] {
  try {
    load(servers);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.issues;
  }
  assert.fail("the document was accepted");
}

Deno.test("parseMcpUserToken() resolves kind: mcp and sends the token as a Bearer header without a template", () => {
  const config = load(`  tracker:
    transport: streamable-http
    url: https://mcp.tracker.example/mcp
    requiresUserToken: true
    userToken:
      kind: mcp
      displayName: Tracker
      scopes: [read, write]
      clientId: gatehouse-at-tracker
      clientSecret: \${TRACKER_SECRET}
      authorizationHosts: [Auth.Tracker.Example]
  wiki:
    transport: sse
    url: https://mcp.wiki.example/sse
    requiresUserToken: true
    userToken: { kind: mcp }
`);
  const tracker = server(config, "tracker") as HttpServerConfig;
  assert.deepEqual(tracker.headers, { Authorization: "Bearer {{user.token}}" });
  const token = tracker.userToken;
  assert.ok(token?.kind === "mcp");
  assert.equal(token.displayName, "Tracker");
  assert.deepEqual(token.scopes, ["read", "write"]);
  assert.equal(token.clientId, "gatehouse-at-tracker");
  assert.equal(token.clientSecret?.reveal(), "tracker-secret-value");
  assert.equal(String(token.clientSecret), "***");
  assert.deepEqual(token.authorizationHosts, ["auth.tracker.example"]);
  const wiki = server(config, "wiki") as HttpServerConfig;
  assert.deepEqual(wiki.headers, { Authorization: "Bearer {{user.token}}" });
  assert.deepEqual(wiki.userToken, {
    kind: "mcp",
    displayName: "wiki",
    instructions: undefined,
    scopes: [],
    clientId: undefined,
    clientSecret: undefined,
    authorizationHosts: [],
  });
});

Deno.test("parseMcpUserToken() leaves an explicit Authorization header alone (in any case)", () => {
  const config = load(`  tracker:
    transport: streamable-http
    url: https://mcp.tracker.example/mcp
    headers: { authorization: "Token {{user.token}}", X-Team: core }
    requiresUserToken: true
    userToken: { kind: mcp }
`);
  const tracker = server(config, "tracker") as HttpServerConfig;
  assert.deepEqual(tracker.headers, { authorization: "Token {{user.token}}", "X-Team": "core" });
});

Deno.test("parseMcpUserToken() refuses what cannot work, with path, line and hint", () => {
  const issues = issuesOf(`  local:
    transport: stdio
    command: tracker-mcp
    env: { TOKEN: "{{user.token}}" }
    requiresUserToken: true
    userToken: { kind: mcp }
  tracker:
    transport: streamable-http
    url: https://mcp.tracker.example/mcp
    requiresUserToken: true
    userToken:
      kind: mcp
      clientSecret: loose
      authorizationHosts: ["https://auth.tracker.example/"]
      pattern: "^x"
  linear:
    transport: streamable-http
    url: https://mcp.linear.example/mcp
    headers: { Authorization: "Bearer {{user.token}}" }
    requiresUserToken: true
    userToken:
      kind: oauth
      authorizationHosts: [auth.linear.example]
      oauth: { issuer: "https://linear.example", clientId: x }
  wiki:
    transport: streamable-http
    url: "https://{{user.email}}.wiki.example/mcp"
    requiresUserToken: true
    userToken: { kind: mcp }
  plaintext:
    transport: sse
    url: http://mcp.plain.example/sse
    requiresUserToken: true
    userToken: { kind: mcp }
`);
  assert.deepEqual(issues, [
    {
      path: ["servers", "local", "userToken", "kind"],
      message: "kind: mcp is for remote servers",
      hint:
        "use transport: streamable-http (or sse) with the server's url, or kind: oauth / manual for a stdio server",
      line: 10,
    },
    {
      path: ["servers", "tracker", "userToken", "pattern"],
      message: "is not used with kind: mcp",
      hint: "remove it: the server's authorization server is discovered from the server itself",
      line: 19,
    },
    {
      path: ["servers", "tracker", "userToken", "clientSecret"],
      message: "is given without clientId",
      hint: "add the clientId the service registered for Gatehouse, or remove clientSecret",
      line: 17,
    },
    {
      path: ["servers", "tracker", "userToken", "authorizationHosts", 0],
      message: 'not a host name: "https://auth.tracker.example/"',
      hint: "a bare host such as auth.tracker.example, without https:// or a path",
      line: 18,
    },
    {
      path: ["servers", "linear", "userToken", "authorizationHosts"],
      message: "is only used with kind: mcp",
      hint: "remove it, or say kind: mcp",
      line: 27,
    },
    {
      path: ["servers", "wiki", "url"],
      message: "a kind: mcp server's URL cannot hold placeholders",
      hint:
        "give the server's one URL: its authorization is discovered once per server, not per person",
      line: 31,
    },
    {
      path: ["servers", "plaintext", "url"],
      message: "a kind: mcp server must be reached over https",
      hint: "people's tokens travel to it; plain http is accepted only for this machine",
      line: 36,
    },
  ]);
});
