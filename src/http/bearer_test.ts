import assert from "node:assert/strict";
import {
  ALICE,
  type AuthParts,
  codeForm,
  exchange,
  issueCode,
  openAuthParts,
  refreshForm,
  registerClient,
  signIn,
} from "../../tests/fixtures/auth_parts.ts";
import { parseConfigText } from "../config/load.ts";
import type { ResolvedConfig, ServerConfig } from "../config/types.ts";
import type { ServerName } from "../core/ids.ts";
import { fingerprint } from "../crypto/random.ts";
import { jwtClaims } from "../../tests/fixtures/oauth_raw.ts";
import { createAuthenticator, type ServerAuthenticator } from "./bearer.ts";

const STATIC = "static-token-0123456789";
const JWT_SHAPED_STATIC = "aaaa.bbbb.cccc";
const BETA_STATIC = "beta-token-9876543210";

/** The servers and the `oauth:` section as an operator writes them. */
const CONFIG = parseConfigText(
  `
baseUrl: https://gw.example.com
secret: \${SECRET}
servers:
  alpha:
    transport: streamable-http
    url: http://127.0.0.1:9/mcp
    serviceAuths: [{ type: bearer, tokens: ["\${STATIC}", "${JWT_SHAPED_STATIC}"] }]
  beta:
    transport: streamable-http
    url: http://127.0.0.1:9/mcp
    serviceAuths: [{ type: bearer, tokens: ["${BETA_STATIC}"] }]
  open:
    transport: streamable-http
    url: http://127.0.0.1:9/mcp
    public: true
oauth:
  accessTokenTtl: 5m
  idp: { provider: oidc, issuer: https://login.example.com, clientId: gw, clientSecret: x }
  allow: { domains: [example.com] }
`,
  (name) => ({ SECRET: "bearer-test-master-secret-0123456789-abcdef", STATIC })[name],
);

function server(config: ResolvedConfig, name: string): ServerConfig {
  return config.servers.get(name as ServerName)!;
}

/** The authorization server's parts as `config` has them: its issuer, secret and lifetimes. */
async function authServer(config: ResolvedConfig): Promise<AuthParts> {
  return await openAuthParts({
    issuer: config.baseUrl,
    master: config.secret,
    servers: [...config.servers.keys()],
    lifetimes: { accessMs: config.oauth!.accessTokenTtlMs },
  });
}

const call = (authorization?: string, url = "https://gw.example.com/alpha/mcp") =>
  new Request(url, authorization ? { headers: { authorization } } : {});

async function withAlpha(
  test: (auth: ServerAuthenticator, parts: AuthParts) => Promise<void>,
  namedGroups?: ReadonlySet<string>,
): Promise<void> {
  const parts = await authServer(CONFIG);
  try {
    const auth = await createAuthenticator(server(CONFIG, "alpha"), parts.verifier, namedGroups);
    await test(auth, parts);
  } finally {
    parts.close();
  }
}

const invalid = (description: string) => ({ ok: false, error: "invalid_token", description });
const NOT_FOR_ALPHA = invalid('the bearer token is not valid for the server "alpha"');

Deno.test("createAuthenticator() accepts each configured static token as a principal named by its fingerprint", async () => {
  await withAlpha(async (auth) => {
    assert.deepEqual(await auth.authenticate(call(`Bearer ${STATIC}`), "127.0.0.1"), {
      ok: true,
      principal: { id: `token:${await fingerprint(STATIC)}` },
    });
    // The scheme is case-insensitive (RFC 9110 §11.1).
    assert.deepEqual(await auth.authenticate(call(`bearer ${JWT_SHAPED_STATIC}`), "127.0.0.1"), {
      ok: true,
      principal: { id: `token:${await fingerprint(JWT_SHAPED_STATIC)}` },
    });
  });
});

Deno.test("createAuthenticator() refuses a static token that is close to a configured one, or configured for another server", async () => {
  await withAlpha(async (auth) => {
    for (
      const token of [
        STATIC.slice(0, -1),
        `${STATIC}0`,
        STATIC.toUpperCase(),
        BETA_STATIC,
        "aaaa.bbbb.cccd",
      ]
    ) {
      assert.deepEqual(
        await auth.authenticate(call(`Bearer ${token}`), "127.0.0.1"),
        token.includes(".") ? invalid("the access token is malformed") : NOT_FOR_ALPHA,
        token,
      );
    }
  });
});

Deno.test("createAuthenticator() accepts a Gatehouse access token for this server as the person it was issued to", async () => {
  await withAlpha(async (auth, parts) => {
    const { client, tokens } = await signIn(parts, ["https://gw.example.com/alpha"]);
    const grantId = jwtClaims(tokens.access_token).fam;
    assert.deepEqual(
      await auth.authenticate(call(`Bearer ${tokens.access_token}`), "127.0.0.1"),
      {
        ok: true,
        principal: {
          id: "oidc:alice",
          email: "alice@example.com",
          clientId: client.clientId,
          groups: [],
          allGroups: [],
          grantId,
        },
      },
    );
  });
});

Deno.test("createAuthenticator() gives the person the groups their Gatehouse access token carries", async () => {
  await withAlpha(async (auth, parts) => {
    parts.namedGroups = new Set(["editors", "ops"]);
    const { client } = await registerClient(parts);
    const code = await issueCode(parts, client, {
      identity: { ...ALICE, groups: ["ops", "unnamed", "editors"] },
    });
    const tokens = await exchange(parts, codeForm(client, code));
    const result = await auth.authenticate(call(`Bearer ${tokens.access_token}`), "127.0.0.1");
    assert.ok(result.ok);
    assert.deepEqual(result.principal.groups, ["ops", "editors"]);
    // Backends told who calls (identity:) hear of every group.
    assert.deepEqual(result.principal.allGroups, ["ops", "unnamed", "editors"]);
  }, new Set(["editors", "ops"]));
});

Deno.test("createAuthenticator() judges a person by their grant's groups that the running configuration names, not by the token's", async () => {
  // The token was issued when only "ops" was named; the configuration now names "editors" too.
  await withAlpha(async (auth, parts) => {
    parts.namedGroups = new Set(["ops"]);
    const { client } = await registerClient(parts);
    const code = await issueCode(parts, client, {
      identity: { ...ALICE, groups: ["ops", "unnamed", "editors"] },
    });
    const tokens = await exchange(parts, codeForm(client, code));
    const token = `Bearer ${tokens.access_token}`;
    for (let i = 0; i < 2; i++) {
      // The second time from the verifier's caches, not storage.
      const result = await auth.authenticate(call(token), "127.0.0.1");
      assert.ok(result.ok);
      assert.deepEqual(result.principal.groups, ["ops", "editors"]);
    }
  }, new Set(["editors", "ops"]));
});

Deno.test("createAuthenticator() refuses a Gatehouse access token for another server, saying which service it is not for", async () => {
  await withAlpha(async (auth, parts) => {
    const { tokens } = await signIn(parts, ["https://gw.example.com/beta"]);
    assert.deepEqual(
      await auth.authenticate(call(`Bearer ${tokens.access_token}`), "127.0.0.1"),
      invalid(
        "the access token is not valid for https://gw.example.com/alpha; obtain a token for this service",
      ),
    );
  });
});

Deno.test("createAuthenticator() refuses a Gatehouse access token with a changed signature", async () => {
  await withAlpha(async (auth, parts) => {
    const { tokens } = await signIn(parts, ["https://gw.example.com/alpha"]);
    const [header, payload, signature] = tokens.access_token.split(".");
    const changed = signature.slice(0, 10) + (signature[10] === "A" ? "B" : "A") +
      signature.slice(11);
    const tampered = `${header}.${payload}.${changed}`;
    assert.deepEqual(
      await auth.authenticate(call(`Bearer ${tampered}`), "127.0.0.1"),
      invalid("the access token's signature is invalid"),
    );
  });
});

Deno.test("createAuthenticator() refuses a Gatehouse access token signed under another gateway's secret", async () => {
  const other = parseConfigText(
    `baseUrl: https://gw.example.com
secret: another-gateway-master-secret-0123456789-xy
servers:
  alpha: { transport: streamable-http, url: "http://127.0.0.1:9/mcp", public: true }
oauth:
  idp: { provider: oidc, issuer: https://login.example.com, clientId: gw, clientSecret: x }
  allow: { domains: [example.com] }
`,
    () => undefined,
  );
  const foreign = await authServer(other);
  try {
    const { tokens } = await signIn(foreign, ["https://gw.example.com/alpha"]);
    await withAlpha(async (auth) => {
      assert.deepEqual(
        await auth.authenticate(call(`Bearer ${tokens.access_token}`), "127.0.0.1"),
        invalid("the access token's signature is invalid"),
      );
    });
  } finally {
    foreign.close();
  }
});

Deno.test("createAuthenticator() refuses a Gatehouse access token once it has expired", async () => {
  await withAlpha(async (auth, parts) => {
    const { tokens } = await signIn(parts, ["https://gw.example.com/alpha"]);
    assert.ok((await auth.authenticate(call(`Bearer ${tokens.access_token}`), "127.0.0.1")).ok);
    parts.clock.advance(CONFIG.oauth!.accessTokenTtlMs + 30_000);
    assert.deepEqual(
      await auth.authenticate(call(`Bearer ${tokens.access_token}`), "127.0.0.1"),
      invalid("the access token has expired; refresh it or sign in again"),
    );
  });
});

Deno.test("createAuthenticator() refuses a Gatehouse access token whose grant was revoked", async () => {
  await withAlpha(async (auth, parts) => {
    const { client, tokens } = await signIn(parts, ["https://gw.example.com/alpha"]);
    // A replayed refresh token revokes the grant (RFC 9700 §4.14).
    await exchange(parts, refreshForm(client, tokens.refresh_token!));
    await assert.rejects(exchange(parts, refreshForm(client, tokens.refresh_token!)));
    assert.deepEqual(
      await auth.authenticate(call(`Bearer ${tokens.access_token}`), "127.0.0.1"),
      invalid("this grant was revoked: sign in again through your MCP client"),
    );
  });
});

Deno.test("createAuthenticator() refuses a refresh token presented as a bearer token", async () => {
  await withAlpha(async (auth, parts) => {
    const { tokens } = await signIn(parts, ["https://gw.example.com/alpha"]);
    assert.deepEqual(
      await auth.authenticate(call(`Bearer ${tokens.refresh_token}`), "127.0.0.1"),
      NOT_FOR_ALPHA,
    );
  });
});

Deno.test("createAuthenticator() asks for authorization when no bearer token is sent", async () => {
  await withAlpha(async (auth) => {
    const unauthorized = {
      ok: false,
      error: "unauthorized",
      description: 'the server "alpha" requires authorization: sign in through your MCP client',
    };
    assert.deepEqual(await auth.authenticate(call(), "127.0.0.1"), unauthorized);
    assert.deepEqual(
      await auth.authenticate(call(`Basic ${btoa(`x:${STATIC}`)}`), "127.0.0.1"),
      unauthorized,
    );
    assert.deepEqual(await auth.authenticate(call("Bearer "), "127.0.0.1"), unauthorized);
  });
  const withoutOAuth = await createAuthenticator(server(CONFIG, "alpha"));
  assert.deepEqual(await withoutOAuth.authenticate(call(), "127.0.0.1"), {
    ok: false,
    error: "unauthorized",
    description: 'the server "alpha" requires a bearer token: send Authorization: Bearer <token>',
  });
});

Deno.test("createAuthenticator() refuses a token in the query string, even a valid one", async () => {
  await withAlpha(async (auth) => {
    const url = `https://gw.example.com/alpha/mcp?access_token=${STATIC}`;
    assert.deepEqual(await auth.authenticate(call(`Bearer ${STATIC}`, url), "127.0.0.1"), {
      ok: false,
      error: "invalid_request",
      description: "tokens in the query string are refused; send Authorization: Bearer <token>",
    });
  });
});

Deno.test("createAuthenticator() admits anyone to a public server, as its remote address", async () => {
  const auth = await createAuthenticator(server(CONFIG, "open"));
  assert.deepEqual(await auth.authenticate(call(), "192.0.2.7"), {
    ok: true,
    principal: { id: "anonymous:192.0.2.7" },
  });
});
