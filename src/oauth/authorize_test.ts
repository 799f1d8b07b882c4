import assert from "node:assert/strict";
import {
  ALPHA,
  type AuthParts,
  BETA,
  CHALLENGE,
  LIFETIMES,
  REDIRECT,
  registerClient,
  withAuthParts,
} from "../../tests/fixtures/auth_parts.ts";
import { type AuthorizeCheck, checkAuthorizationRequest } from "./authorize.ts";
import type { ClientRecord } from "./clients.ts";

function params(client: ClientRecord, overrides: Record<string, string | null> = {}) {
  const values: Record<string, string | null> = {
    response_type: "code",
    client_id: client.clientId,
    redirect_uri: REDIRECT,
    state: "state-123",
    code_challenge: CHALLENGE,
    code_challenge_method: "S256",
    resource: ALPHA,
    ...overrides,
  };
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) {
    if (value !== null) search.append(name, value);
  }
  return search;
}

async function check(parts: AuthParts, search: URLSearchParams): Promise<AuthorizeCheck> {
  return await checkAuthorizationRequest(search, parts.tokenDeps);
}

/** The outcome as the person or the client would see it. */
function seen(result: AuthorizeCheck) {
  if (result.ok) return { ok: true };
  const shown = {
    kind: result.kind,
    error: result.error.code,
    error_description: result.error.description,
  };
  return result.kind === "page"
    ? shown
    : { ...shown, redirectUri: result.redirectUri, state: result.state };
}

Deno.test("checkAuthorizationRequest() accepts a complete request and returns what the code will carry", async () => {
  await withAuthParts(async (parts) => {
    const { client } = await registerClient(parts, { client_name: "Editor" });
    const result = await check(parts, params(client, { scope: "mcp offline_access admin" }));
    assert.ok(result.ok);
    assert.deepEqual(result.request, {
      clientId: client.clientId,
      clientName: "Editor",
      redirectUri: REDIRECT,
      state: "state-123",
      codeChallenge: CHALLENGE,
      audience: [ALPHA],
      // Scopes it does not know are dropped (RFC 6749 §3.3); the audience decides access.
      scope: "mcp",
    });
  });
});

Deno.test("checkAuthorizationRequest() shows a page, never a redirect, for a redirect_uri the client did not register", async () => {
  await withAuthParts(async (parts) => {
    const { client } = await registerClient(parts);
    const page = {
      kind: "page",
      error: "invalid_request",
      error_description:
        "redirect_uri is not one the client registered; nothing was sent back to it",
    };
    for (
      const uri of [
        "https://evil.example.com/callback",
        `${REDIRECT}/more`, // no prefix matching
        `${REDIRECT}?next=https://evil.example.com`,
        REDIRECT.toUpperCase(),
      ]
    ) {
      assert.deepEqual(seen(await check(parts, params(client, { redirect_uri: uri }))), page, uri);
    }
  });
});

Deno.test("checkAuthorizationRequest() lets a loopback redirect_uri name any port, and nothing else differ", async () => {
  await withAuthParts(async (parts) => {
    const { client } = await registerClient(parts, {
      redirect_uris: ["http://127.0.0.1:3000/callback"],
    });
    const ok = await check(
      parts,
      params(client, { redirect_uri: "http://127.0.0.1:51234/callback" }),
    );
    assert.ok(ok.ok);
    assert.equal(ok.request.redirectUri, "http://127.0.0.1:51234/callback");
    for (const uri of ["http://localhost:3000/callback", "http://127.0.0.1:3000/other"]) {
      const result = await check(parts, params(client, { redirect_uri: uri }));
      assert.ok(!result.ok && result.kind === "page", uri);
    }
  });
});

Deno.test("checkAuthorizationRequest() uses the only registered redirect_uri when none is given, and requires one when there are several", async () => {
  await withAuthParts(async (parts) => {
    const { client: one } = await registerClient(parts);
    const implied = await check(parts, params(one, { redirect_uri: null }));
    assert.ok(implied.ok);
    assert.equal(implied.request.redirectUri, REDIRECT);
    const { client: two } = await registerClient(parts, {
      redirect_uris: [REDIRECT, "https://app.example.com/other"],
    });
    assert.deepEqual(seen(await check(parts, params(two, { redirect_uri: null }))), {
      kind: "page",
      error: "invalid_request",
      error_description: "redirect_uri is required",
    });
  });
});

Deno.test("checkAuthorizationRequest() shows a page for a missing, repeated, unknown or expired client", async () => {
  await withAuthParts(async (parts) => {
    const { client } = await registerClient(parts);
    assert.deepEqual(seen(await check(parts, params(client, { client_id: null }))), {
      kind: "page",
      error: "invalid_request",
      error_description: "client_id is required",
    });
    const repeated = params(client);
    repeated.append("client_id", client.clientId);
    assert.deepEqual(seen(await check(parts, repeated)), {
      kind: "page",
      error: "invalid_request",
      error_description: "the client_id parameter is repeated",
    });
    const unknown = {
      kind: "page",
      error: "invalid_client",
      error_description:
        "this client is not registered with Gatehouse (or its registration expired); register it again",
    };
    assert.deepEqual(
      seen(await check(parts, params(client, { client_id: "gh_neverregistered000000" }))),
      unknown,
    );
    // A registration never used for a token lapses after unusedClientTtl.
    parts.clock.advance(LIFETIMES.unusedClientMs);
    assert.deepEqual(seen(await check(parts, params(client))), unknown);
  });
});

Deno.test("checkAuthorizationRequest() redirects with the state once the client is proven, for a wrong response_type", async () => {
  await withAuthParts(async (parts) => {
    const { client } = await registerClient(parts);
    assert.deepEqual(seen(await check(parts, params(client, { response_type: "token" }))), {
      kind: "redirect",
      error: "unsupported_response_type",
      error_description: "only response_type=code is supported",
      redirectUri: REDIRECT,
      state: "state-123",
    });
  });
});

Deno.test("checkAuthorizationRequest() requires a state and never echoes one it refused", async () => {
  await withAuthParts(async (parts) => {
    const { client } = await registerClient(parts);
    assert.deepEqual(seen(await check(parts, params(client, { state: null }))), {
      kind: "redirect",
      error: "invalid_request",
      error_description: "state is required",
      redirectUri: REDIRECT,
      state: undefined,
    });
    assert.deepEqual(seen(await check(parts, params(client, { state: "s".repeat(1_025) }))), {
      kind: "redirect",
      error: "invalid_request",
      error_description: "state is longer than 1024 characters",
      redirectUri: REDIRECT,
      state: undefined,
    });
    const repeated = params(client);
    repeated.append("state", "other");
    assert.deepEqual(seen(await check(parts, repeated)), {
      kind: "redirect",
      error: "invalid_request",
      error_description: "the state parameter is repeated",
      redirectUri: REDIRECT,
      state: undefined,
    });
  });
});

Deno.test("checkAuthorizationRequest() requires PKCE with S256 and a well-formed challenge", async () => {
  await withAuthParts(async (parts) => {
    const { client } = await registerClient(parts);
    const cases: [Record<string, string | null>, string][] = [
      [{ code_challenge: null }, "code_challenge is required (PKCE with S256)"],
      [{ code_challenge_method: null }, "code_challenge_method is required and must be S256"],
      [
        { code_challenge_method: "plain" },
        "code_challenge_method plain is not supported; use S256",
      ],
      [
        { code_challenge: CHALLENGE.slice(1) },
        "code_challenge must be the 43-character base64url SHA-256 of the verifier",
      ],
    ];
    for (const [overrides, description] of cases) {
      assert.deepEqual(seen(await check(parts, params(client, overrides))), {
        kind: "redirect",
        error: "invalid_request",
        error_description: description,
        redirectUri: REDIRECT,
        state: "state-123",
      });
    }
  });
});

Deno.test("checkAuthorizationRequest() requires resources that name this gateway's services (RFC 8707)", async () => {
  await withAuthParts(async (parts) => {
    const { client } = await registerClient(parts);
    const refused = (description: string) => ({
      kind: "redirect",
      error: "invalid_target",
      error_description: description,
      redirectUri: REDIRECT,
      state: "state-123",
    });
    assert.deepEqual(
      seen(await check(parts, params(client, { resource: null }))),
      refused("resource is required: name the service URI the token is for (RFC 8707)"),
    );
    for (const resource of ["https://evil.example.com/alpha", `${parts.issuer}/gamma`]) {
      assert.deepEqual(
        seen(await check(parts, params(client, { resource }))),
        refused(`${resource} is not a service of this gateway`),
      );
    }
    const several = params(client, { resource: `${ALPHA}/mcp` });
    several.append("resource", ALPHA);
    several.append("resource", BETA);
    const result = await check(parts, several);
    assert.ok(result.ok);
    assert.deepEqual(result.request.audience, [ALPHA, BETA]);
  });
});
