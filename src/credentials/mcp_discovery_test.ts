import assert from "node:assert/strict";
import type * as oauth from "oauth4webapi";
import {
  authorizationServerMetadataUrls,
  canonicalResource,
  checkAuthorizationServer,
  chooseScopes,
  discoverUpstream,
  MAX_AUTHORIZATION_SERVERS,
  MAX_CHALLENGE_CHARS,
  parseBearerChallenge,
  processProtectedResourceMetadata,
  protectedResourceMetadataUrls,
} from "./mcp_discovery.ts";
import { ServiceOAuthError } from "./service_oauth.ts";
import { upstreamFetch } from "./upstream_fetch.ts";
import { testClock } from "../../tests/fixtures/clock.ts";
import { startHostileUpstream } from "../../tests/fixtures/hostile_upstream.ts";

const SERVER = new URL("https://mcp.tracker.example/mcp");
const HOSTS = new Set(["mcp.tracker.example", "auth.tracker.example"]);

Deno.test("parseBearerChallenge() reads resource_metadata, scope and error, beside other schemes", () => {
  assert.deepEqual(
    parseBearerChallenge(
      'Basic realm="x", Bearer error="insufficient_scope", scope="read admin", resource_metadata="https://mcp.tracker.example/.well-known/oauth-protected-resource/mcp"',
    ),
    {
      error: "insufficient_scope",
      scope: "read admin",
      resourceMetadata: "https://mcp.tracker.example/.well-known/oauth-protected-resource/mcp",
    },
  );
  assert.deepEqual(parseBearerChallenge('bearer scope=read, error="a \\"quoted\\" b"'), {
    error: 'a "quoted" b',
    scope: "read",
    resourceMetadata: undefined,
  });
  // The first of a repeated parameter counts.
  assert.equal(parseBearerChallenge('Bearer scope="read", scope="admin"')?.scope, "read");
  assert.equal(parseBearerChallenge('Basic realm="x"'), undefined);
  assert.equal(parseBearerChallenge(null), undefined);
  assert.equal(parseBearerChallenge("BearerX scope=read"), undefined);
});

Deno.test("parseBearerChallenge() sets aside a challenge longer than MAX_CHALLENGE_CHARS, and reads blanks and commas between parameters", () => {
  // A remote server's header can be hundreds of kilobytes; such a challenge is not read at all.
  const long = `Bearer error="insufficient_scope", scope="${"admin ".repeat(2_000)}"`;
  assert.ok(long.length > MAX_CHALLENGE_CHARS);
  assert.equal(parseBearerChallenge(long), undefined);
  assert.deepEqual(parseBearerChallenge('Bearer ,, scope=read ,\t error = "x",'), {
    error: "x",
    scope: "read",
    resourceMetadata: undefined,
  });
  // Blanks where a parameter should follow (once seconds of backtracking for 60 kB of them).
  const blanks = `Bearer error="insufficient_scope"${" ".repeat(MAX_CHALLENGE_CHARS - 40)}(`;
  assert.deepEqual(parseBearerChallenge(blanks), {
    error: "insufficient_scope",
    scope: undefined,
    resourceMetadata: undefined,
  });
});

Deno.test("canonicalResource() drops the fragment and the bare root's slash, and keeps the path", () => {
  assert.equal(
    canonicalResource(new URL("HTTPS://MCP.Example.com/mcp#x")),
    "https://mcp.example.com/mcp",
  );
  assert.equal(canonicalResource(new URL("https://mcp.example.com/")), "https://mcp.example.com");
});

Deno.test("protectedResourceMetadataUrls() tries the challenge's URL, then the path, then the root", () => {
  assert.deepEqual(
    protectedResourceMetadataUrls(SERVER, { resourceMetadata: "https://mcp.tracker.example/prm" })
      .map(String),
    [
      "https://mcp.tracker.example/prm",
      "https://mcp.tracker.example/.well-known/oauth-protected-resource/mcp",
      "https://mcp.tracker.example/.well-known/oauth-protected-resource",
    ],
  );
  assert.deepEqual(
    protectedResourceMetadataUrls(new URL("https://mcp.tracker.example/"), {
      resourceMetadata: "::",
    })
      .map(String),
    ["https://mcp.tracker.example/.well-known/oauth-protected-resource"],
  );
});

Deno.test("processProtectedResourceMetadata() accepts the server's own resource or a parent path of it", () => {
  const servers = ["https://auth.tracker.example"];
  assert.deepEqual(
    processProtectedResourceMetadata(
      {
        resource: "https://mcp.tracker.example/mcp",
        authorization_servers: servers,
        scopes_supported: ["read"],
      },
      SERVER,
    ),
    {
      resource: "https://mcp.tracker.example/mcp",
      authorizationServers: servers,
      scopesSupported: ["read"],
    },
  );
  assert.equal(
    processProtectedResourceMetadata(
      { resource: "https://mcp.tracker.example", authorization_servers: servers },
      SERVER,
    ).resource,
    "https://mcp.tracker.example",
  );
});

Deno.test("processProtectedResourceMetadata() refuses metadata about another resource, or naming no authorization server", () => {
  const refusals: [unknown, RegExp][] = [
    [[], /not a JSON object/],
    [{ authorization_servers: ["https://a"] }, /names no resource/],
    [{ resource: "not a url", authorization_servers: ["https://a"] }, /not a URL/],
    [
      { resource: "https://evil.example/mcp", authorization_servers: ["https://a"] },
      /is for https:\/\/evil.example\/mcp, not for https:\/\/mcp.tracker.example\/mcp/,
    ],
    [
      { resource: "https://mcp.tracker.example/mcp-other", authorization_servers: ["https://a"] },
      /not for/,
    ],
    [
      { resource: "http://mcp.tracker.example/mcp", authorization_servers: ["https://a"] },
      /not for/,
    ],
    [
      { resource: "https://mcp.tracker.example/mcp", authorization_servers: [] },
      /no authorization_servers/,
    ],
    [
      { resource: "https://mcp.tracker.example/mcp", authorization_servers: [7] },
      /no authorization_servers/,
    ],
  ];
  for (const [body, expected] of refusals) {
    assert.throws(
      () => processProtectedResourceMetadata(body, SERVER),
      (error) => error instanceof ServiceOAuthError && expected.test(error.message),
      JSON.stringify(body),
    );
  }
});

Deno.test("authorizationServerMetadataUrls() follows the MCP spec's order, with path insertion", () => {
  assert.deepEqual(
    authorizationServerMetadataUrls(new URL("https://auth.tracker.example")).map(String),
    [
      "https://auth.tracker.example/.well-known/oauth-authorization-server",
      "https://auth.tracker.example/.well-known/openid-configuration",
    ],
  );
  assert.deepEqual(
    authorizationServerMetadataUrls(new URL("https://auth.tracker.example/tenant1")).map(String),
    [
      "https://auth.tracker.example/.well-known/oauth-authorization-server/tenant1",
      "https://auth.tracker.example/.well-known/openid-configuration/tenant1",
      "https://auth.tracker.example/tenant1/.well-known/openid-configuration",
    ],
  );
});

Deno.test("checkAuthorizationServer() refuses a server without S256 or with an endpoint off the allowed hosts or https", () => {
  const good: oauth.AuthorizationServer = {
    issuer: "https://auth.tracker.example",
    authorization_endpoint: "https://auth.tracker.example/authorize",
    token_endpoint: "https://auth.tracker.example/token",
    registration_endpoint: "https://auth.tracker.example/register",
    code_challenge_methods_supported: ["S256"],
  };
  checkAuthorizationServer(good, HOSTS);
  const refusals: [Partial<oauth.AuthorizationServer>, RegExp][] = [
    [{ token_endpoint: undefined }, /names no authorization or token endpoint/],
    [{ code_challenge_methods_supported: ["plain"] }, /PKCE with S256/],
    [{ code_challenge_methods_supported: undefined }, /PKCE with S256/],
    [
      { token_endpoint: "https://169.254.169.254/token" },
      /169\.254\.169\.254 is neither the server's own host nor in its userToken.authorizationHosts/,
    ],
    [{ registration_endpoint: "http://auth.tracker.example/register" }, /is not https/],
    [{ revocation_endpoint: "https://internal.corp/revoke" }, /internal\.corp is neither/],
    [{ authorization_endpoint: "https://phish.example/authorize" }, /phish\.example is neither/],
  ];
  for (const [change, expected] of refusals) {
    assert.throws(
      () => checkAuthorizationServer({ ...good, ...change }, HOSTS),
      (error) => error instanceof ServiceOAuthError && expected.test(error.message),
      JSON.stringify(change),
    );
  }
});

Deno.test("chooseScopes() takes the configured scopes, else the challenge's, else scopes_supported", () => {
  const resource = { resource: "r", authorizationServers: [], scopesSupported: ["a", "b"] };
  assert.deepEqual(chooseScopes(["x"], { scope: "read" }, resource), ["x"]);
  assert.deepEqual(chooseScopes([], { scope: "read  write" }, resource), ["read", "write"]);
  assert.deepEqual(chooseScopes([], undefined, resource), ["a", "b"]);
  assert.deepEqual(chooseScopes([], undefined, { ...resource, scopesSupported: undefined }), []);
});

Deno.test("discoverUpstream() gives up as a whole when its signal ends, however many steps are left", async () => {
  const arrived = Promise.withResolvers<void>();
  const hold = Promise.withResolvers<void>();
  const ready = Promise.withResolvers<number>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: ({ port }) => ready.resolve(port) },
    async () => {
      arrived.resolve();
      await hold.promise;
      return new Response("late", { status: 500 });
    },
  );
  const url = new URL(`http://127.0.0.1:${await ready.promise}/mcp`);
  const hosts = new Set(["127.0.0.1"]);
  // Each answer may take a minute: only the signal ends this early.
  const fetch = upstreamFetch({ hosts, clock: testClock(), timeoutMs: 60_000 });
  const deadline = new AbortController();
  try {
    const discovery = discoverUpstream(url, fetch, hosts, [], deadline.signal);
    await arrived.promise;
    deadline.abort(new DOMException("discovery took too long", "TimeoutError"));
    await assert.rejects(
      discovery,
      (error) =>
        error instanceof ServiceOAuthError &&
        /could not find how to authorize at .*the server: discovery took too long/.test(
          error.message,
        ),
    );
  } finally {
    hold.resolve();
    await server.shutdown();
  }
});

Deno.test("discoverUpstream() tries only the first MAX_AUTHORIZATION_SERVERS a server lists, not as many as it likes", async () => {
  const server = await startHostileUpstream();
  try {
    const listed = Array.from({ length: 50 }, (_, i) => `${server.origin}/as${i}`);
    server.prm.authorization_servers = listed;
    const hosts = new Set(["127.0.0.1"]);
    const fetch = upstreamFetch({ hosts, clock: testClock() });
    await assert.rejects(
      discoverUpstream(new URL(server.url), fetch, hosts, []),
      ServiceOAuthError,
    );
    const asked = new Set(
      server.seen.map((request) => /\/(as\d+)/.exec(request.path)?.[1]).filter(Boolean),
    );
    assert.deepEqual(
      [...asked],
      listed.slice(0, MAX_AUTHORIZATION_SERVERS).map((url) => url.slice(-3)),
    );
  } finally {
    await server.close();
  }
});
