/**
 * The adversarial table: each case is an attack or a mistake, with the exact status, OAuth
 * error code and description the gateway must answer. One gateway, one real IdP, one browser.
 */
import assert from "node:assert/strict";
import { Secret } from "../src/core/secret.ts";
import { encodeBase64Url } from "../src/crypto/base64url.ts";
import { signJwt } from "../src/crypto/jwt.ts";
import { deriveHmacKey } from "../src/crypto/keys.ts";
import { REDIRECT_URI } from "./fixtures/oauth_client.ts";
import { startOAuthGateway, TEST_MASTER_SECRET } from "./fixtures/oauth_gateway.ts";
import {
  authorizeParams,
  exchangeCode,
  jwtClaims,
  obtainCode,
  register,
  registerClient,
  token,
  VERIFIER,
} from "./fixtures/oauth_raw.ts";
import { INIT, mcpHeaders } from "./fixtures/raw.ts";
import { UserAgent } from "./fixtures/user_agent.ts";

interface Answer {
  status: number;
  error?: string;
  description?: string;
  /** Where a redirect went, when it did. */
  location?: string;
}

interface Case {
  name: string;
  run(): Promise<Answer>;
  expect: { status: number; error?: string; description: RegExp; location?: RegExp | null };
}

const json = (v: unknown) => encodeBase64Url(new TextEncoder().encode(JSON.stringify(v)));

Deno.test("security table: adversarial OAuth and token cases get their exact answers", async (t) => {
  // The table's failed token requests all come from one address, nearly as many as
  // tokenFailuresPerAddress allows by default: a new case must not meet the 429 meant for
  // guessers. tests/rate_limit_test.ts covers that limit.
  const setup = await startOAuthGateway("rateLimits: { tokenFailuresPerAddress: off }\n");
  const base = setup.url;
  const alpha = `${base}/alpha`;
  const agent = new UserAgent();
  try {
    const client = await registerClient(base);
    const other = await registerClient(base);
    const confidential = await registerClient(base, {
      token_endpoint_auth_method: "client_secret_post",
    });

    /** A new authorization code for `client` and alpha, through login and consent. */
    const freshCode = async () =>
      (await obtainCode(agent, base, client.client_id, alpha)).get("code")!;
    const code1 = await freshCode();
    const tokens = (await exchangeCode(base, client.client_id, code1)).json;
    assert.ok(tokens.access_token && tokens.refresh_token, JSON.stringify(tokens));

    const masterKey = await deriveHmacKey(new Secret(TEST_MASTER_SECRET), "jwt-signing");
    // Read when each case runs: a slow machine may take long over the cases before it.
    const now = () => Math.floor(Date.now() / 1000);
    const claims = jwtClaims(tokens.access_token);
    const forge = async (overrides: Record<string, unknown>, typ = "at+jwt", key = masterKey) =>
      await signJwt(key, typ, { ...claims, ...overrides });

    /** An MCP request to alpha with this Authorization header (or URL suffix). */
    const mcp = async (authorization?: string, suffix = "", server = "alpha"): Promise<Answer> => {
      const headers = mcpHeaders(authorization ? { authorization } : {});
      const response = await fetch(`${base}/${server}/mcp${suffix}`, {
        method: "POST",
        headers,
        body: JSON.stringify(INIT),
      });
      const body = await response.text();
      const parsed = response.headers.get("content-type")?.includes("json") ? JSON.parse(body) : {};
      return {
        status: response.status,
        error: parsed.error,
        description: parsed.error_description,
      };
    };
    const bearer = (value: string) => `Bearer ${value}`;
    const tokenAnswer = async (
      form: Record<string, string> | string,
      headers?: Record<string, string>,
    ) => {
      const r = await token(base, form, headers);
      return { status: r.status, error: r.json.error, description: r.json.error_description };
    };
    const authorize = async (params: URLSearchParams): Promise<Answer> => {
      const response = await agent.request(`${base}/authorize?${params}`);
      const body = await response.text();
      // A redirect, or the page's link the person may follow to the client.
      const location = response.headers.get("location") ??
        /<a class="button" href="([^"]*)" rel="noreferrer">Go to/.exec(body)?.[1]
          .replaceAll("&amp;", "&");
      if (location) {
        const url = new URL(location);
        return {
          status: response.status,
          error: url.searchParams.get("error") ?? undefined,
          description: url.searchParams.get("error_description") ?? "",
          location,
        };
      }
      return { status: response.status, description: body };
    };
    const registration = async (body: Record<string, unknown> | string): Promise<Answer> => {
      if (typeof body === "string") {
        const response = await fetch(`${base}/register`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        });
        const parsed = await response.json();
        return {
          status: response.status,
          error: parsed.error,
          description: parsed.error_description,
        };
      }
      const r = await register(base, body);
      return { status: r.status, error: r.json.error, description: r.json.error_description };
    };

    // A code that is redeemed once by its owner, and then replayed.
    const replayCode = await freshCode();
    const replayTokens = (await exchangeCode(base, client.client_id, replayCode)).json;

    const cases: Case[] = [
      // --- access tokens at the MCP endpoint ---
      {
        name: "no token",
        run: () => mcp(),
        expect: { status: 401, error: "unauthorized", description: /requires authorization/ },
      },
      {
        name: "token for another service",
        run: () => mcp(bearer(tokens.access_token), "", "beta"),
        expect: { status: 401, error: "invalid_token", description: /not valid for .*\/beta/ },
      },
      {
        name: "expired token",
        run: async () => mcp(bearer(await forge({ exp: now() - 120, iat: now() - 400 }))),
        expect: { status: 401, error: "invalid_token", description: /has expired/ },
      },
      {
        name: "expiry within the skew is accepted",
        run: async () => mcp(bearer(await forge({ exp: now() - 5 }))),
        expect: { status: 200, description: /^$/ },
      },
      {
        name: "tampered payload",
        run: () => {
          const [h, , s] = tokens.access_token.split(".");
          return mcp(bearer(`${h}.${json({ ...claims, sub: "oidc:mallory" })}.${s}`));
        },
        expect: { status: 401, error: "invalid_token", description: /signature is invalid/ },
      },
      {
        name: "alg none",
        run: () => mcp(bearer(`${json({ alg: "none", typ: "at+jwt" })}.${json(claims)}.AAAA`)),
        expect: { status: 401, error: "invalid_token", description: /algorithm is not accepted/ },
      },
      {
        name: "alg HS512 header",
        run: () => {
          const [, p, s] = tokens.access_token.split(".");
          return mcp(bearer(`${json({ alg: "HS512", typ: "at+jwt" })}.${p}.${s}`));
        },
        expect: { status: 401, error: "invalid_token", description: /algorithm is not accepted/ },
      },
      {
        name: "wrong typ (JWT)",
        run: async () => mcp(bearer(await forge({}, "JWT"))),
        expect: { status: 401, error: "invalid_token", description: /wrong type/ },
      },
      {
        name: "signed with a key of another purpose",
        run: async () =>
          mcp(
            bearer(
              await forge(
                {},
                "at+jwt",
                await deriveHmacKey(new Secret(TEST_MASTER_SECRET), "csrf"),
              ),
            ),
          ),
        expect: { status: 401, error: "invalid_token", description: /signature is invalid/ },
      },
      {
        name: "signed with another secret",
        run: async () =>
          mcp(
            bearer(
              await forge(
                {},
                "at+jwt",
                await deriveHmacKey(new Secret("x".repeat(40)), "jwt-signing"),
              ),
            ),
          ),
        expect: { status: 401, error: "invalid_token", description: /signature is invalid/ },
      },
      {
        name: "wrong issuer",
        run: async () => mcp(bearer(await forge({ iss: "https://evil.example" }))),
        expect: {
          status: 401,
          error: "invalid_token",
          description: /another authorization server/,
        },
      },
      {
        name: "issued in the future",
        run: async () => mcp(bearer(await forge({ iat: now() + 3600 }))),
        expect: { status: 401, error: "invalid_token", description: /not valid yet/ },
      },
      {
        name: "audience of a foreign host",
        run: async () => mcp(bearer(await forge({ aud: ["https://evil.example/alpha"] }))),
        expect: { status: 401, error: "invalid_token", description: /not valid for/ },
      },
      {
        name: "refresh token used as access token",
        run: () => mcp(bearer(tokens.refresh_token)),
        expect: {
          status: 401,
          error: "invalid_token",
          description: /not valid for the server "alpha"/,
        },
      },
      {
        name: "token in the query string",
        run: () => mcp(undefined, `?access_token=${tokens.access_token}`),
        expect: { status: 400, error: "invalid_request", description: /query string are refused/ },
      },
      {
        name: "garbage bearer",
        run: () => mcp("Bearer a.b.c"),
        expect: { status: 401, error: "invalid_token", description: /malformed/ },
      },
      {
        name: "valid token works",
        run: () => mcp(bearer(tokens.access_token)),
        expect: { status: 200, description: /^$/ },
      },

      // --- the token endpoint ---
      {
        name: "code replay",
        run: () =>
          tokenAnswer({
            grant_type: "authorization_code",
            client_id: client.client_id,
            code: replayCode,
            redirect_uri: REDIRECT_URI,
            code_verifier: VERIFIER,
          }),
        expect: {
          status: 400,
          error: "invalid_grant",
          description: /already used; the tokens issued for it are revoked/,
        },
      },
      {
        name: "token from a replayed code is revoked",
        run: () => mcp(bearer(replayTokens.access_token)),
        expect: { status: 401, error: "invalid_token", description: /this grant was revoked/ },
      },
      {
        name: "refresh from a replayed code is revoked",
        run: () =>
          tokenAnswer({
            grant_type: "refresh_token",
            client_id: client.client_id,
            refresh_token: replayTokens.refresh_token,
          }),
        expect: { status: 400, error: "invalid_grant", description: /already used or revoked/ },
      },
      {
        name: "wrong code_verifier",
        run: async () =>
          tokenAnswer({
            grant_type: "authorization_code",
            client_id: client.client_id,
            code: await freshCode(),
            redirect_uri: REDIRECT_URI,
            code_verifier: "w".repeat(43),
          }),
        expect: {
          status: 400,
          error: "invalid_grant",
          description: /code_verifier does not match/,
        },
      },
      {
        name: "missing code_verifier",
        run: () =>
          tokenAnswer({
            grant_type: "authorization_code",
            client_id: client.client_id,
            code: "x",
            redirect_uri: REDIRECT_URI,
          }),
        expect: { status: 400, error: "invalid_request", description: /code_verifier is required/ },
      },
      {
        name: "redirect_uri differs at the token endpoint",
        run: async () =>
          tokenAnswer({
            grant_type: "authorization_code",
            client_id: client.client_id,
            code: await freshCode(),
            redirect_uri: "http://127.0.0.1:9/other",
            code_verifier: VERIFIER,
          }),
        expect: { status: 400, error: "invalid_grant", description: /redirect_uri differs/ },
      },
      {
        name: "code redeemed by another client",
        run: async () =>
          tokenAnswer({
            grant_type: "authorization_code",
            client_id: other.client_id,
            code: await freshCode(),
            redirect_uri: REDIRECT_URI,
            code_verifier: VERIFIER,
          }),
        expect: { status: 400, error: "invalid_grant", description: /issued to another client/ },
      },
      {
        name: "unknown code",
        run: () =>
          tokenAnswer({
            grant_type: "authorization_code",
            client_id: client.client_id,
            code: "made-up",
            redirect_uri: REDIRECT_URI,
            code_verifier: VERIFIER,
          }),
        expect: {
          status: 400,
          error: "invalid_grant",
          description: /authorization code is not valid/,
        },
      },
      {
        name: "resource widening at the token endpoint",
        run: async () =>
          tokenAnswer({
            grant_type: "authorization_code",
            client_id: client.client_id,
            code: await freshCode(),
            redirect_uri: REDIRECT_URI,
            code_verifier: VERIFIER,
            resource: `${base}/beta`,
          }),
        expect: { status: 400, error: "invalid_target", description: /was not granted/ },
      },
      {
        name: "password grant",
        run: () => tokenAnswer({ grant_type: "password", username: "a", password: "b" }),
        expect: { status: 400, error: "unsupported_grant_type", description: /not supported/ },
      },
      {
        name: "client_credentials grant",
        run: () => tokenAnswer({ grant_type: "client_credentials", client_id: client.client_id }),
        expect: { status: 400, error: "unsupported_grant_type", description: /not supported/ },
      },
      {
        name: "missing grant_type",
        run: () => tokenAnswer({ client_id: client.client_id }),
        expect: { status: 400, error: "invalid_request", description: /grant_type is required/ },
      },
      {
        name: "repeated parameter",
        run: () =>
          tokenAnswer(
            `grant_type=refresh_token&grant_type=refresh_token&client_id=${client.client_id}`,
          ),
        expect: { status: 400, error: "invalid_request", description: /repeated/ },
      },
      {
        name: "JSON body instead of a form",
        run: () => tokenAnswer("{}", { "content-type": "application/json" }),
        expect: { status: 400, error: "invalid_request", description: /x-www-form-urlencoded/ },
      },
      {
        name: "unknown client",
        run: () =>
          tokenAnswer({
            grant_type: "refresh_token",
            client_id: "gh_unknownunknownunknown12",
            refresh_token: "x",
          }),
        expect: { status: 401, error: "invalid_client", description: /unknown or has expired/ },
      },
      {
        name: "confidential client with a wrong secret",
        run: () =>
          tokenAnswer({
            grant_type: "refresh_token",
            client_id: confidential.client_id,
            client_secret: "wrong",
            refresh_token: "x",
          }),
        expect: { status: 401, error: "invalid_client", description: /client secret is wrong/ },
      },
      {
        name: "confidential client without its secret",
        run: () =>
          tokenAnswer({
            grant_type: "refresh_token",
            client_id: confidential.client_id,
            refresh_token: "x",
          }),
        expect: {
          status: 401,
          error: "invalid_client",
          description: /authenticates with client_secret_post, not none/,
        },
      },
      {
        name: "refresh token of another client",
        run: () =>
          tokenAnswer({
            grant_type: "refresh_token",
            client_id: other.client_id,
            refresh_token: tokens.refresh_token,
          }),
        expect: { status: 400, error: "invalid_grant", description: /issued to another client/ },
      },
      {
        name: "access token used as refresh token",
        run: () =>
          tokenAnswer({
            grant_type: "refresh_token",
            client_id: client.client_id,
            refresh_token: tokens.access_token,
          }),
        expect: { status: 400, error: "invalid_grant", description: /refresh token is not valid/ },
      },

      // --- /authorize: before the redirect URI is proven, errors are pages, never redirects ---
      {
        name: "unknown client_id",
        run: async () => authorize(await authorizeParams("gh_nobodynobodynobody1234", {}, alpha)),
        expect: { status: 400, description: /not registered with Gatehouse/, location: null },
      },
      {
        name: "missing client_id",
        run: async () =>
          authorize(await authorizeParams(client.client_id, { client_id: undefined }, alpha)),
        expect: { status: 400, description: /client_id is required/, location: null },
      },
      {
        name: "unregistered redirect_uri",
        run: async () =>
          authorize(
            await authorizeParams(
              client.client_id,
              { redirect_uri: "https://evil.example/cb" },
              alpha,
            ),
          ),
        expect: { status: 400, description: /not one the client registered/, location: null },
      },
      {
        name: "prefix-matched redirect_uri",
        run: async () =>
          authorize(
            await authorizeParams(
              client.client_id,
              { redirect_uri: `${REDIRECT_URI}/../evil` },
              alpha,
            ),
          ),
        expect: { status: 400, description: /not one the client registered/, location: null },
      },
      {
        name: "redirect_uri with an extra query",
        run: async () =>
          authorize(
            await authorizeParams(client.client_id, {
              redirect_uri: `${REDIRECT_URI}?next=https://evil.example`,
            }, alpha),
          ),
        expect: { status: 400, description: /not one the client registered/, location: null },
      },
      {
        name: "repeated client_id",
        run: async () =>
          authorize(
            await authorizeParams(client.client_id, {
              client_id: [client.client_id, other.client_id],
            }, alpha),
          ),
        expect: { status: 400, description: /client_id parameter is repeated/, location: null },
      },
      // --- after it is proven, errors are shown, with a link back to the client carrying
      // state and iss: a client anyone registered is no open redirector (RFC 9700 §4.11.2) ---
      {
        name: "missing resource",
        run: async () => authorize(await authorizeParams(client.client_id, {}, "")),
        expect: {
          status: 400,
          error: "invalid_target",
          description: /resource is required/,
          location: /state=xyz-state.*iss=/,
        },
      },
      {
        name: "foreign resource",
        run: async () =>
          authorize(await authorizeParams(client.client_id, {}, "https://evil.example/alpha")),
        expect: {
          status: 400,
          error: "invalid_target",
          description: /not a service of this gateway/,
          location: /^http:\/\/127\.0\.0\.1:9\/callback\?/,
        },
      },
      {
        name: "resource naming no configured server",
        run: async () => authorize(await authorizeParams(client.client_id, {}, `${base}/postgres`)),
        expect: {
          status: 400,
          error: "invalid_target",
          description: /not a service/,
          location: /state=xyz-state/,
        },
      },
      {
        name: "one good and one foreign resource",
        run: async () =>
          authorize(
            await authorizeParams(client.client_id, {
              resource: [alpha, "https://evil.example/x"],
            }),
          ),
        expect: {
          status: 400,
          error: "invalid_target",
          description: /evil\.example.*not a service/,
          location: /state=/,
        },
      },
      {
        name: "plain PKCE",
        run: async () =>
          authorize(
            await authorizeParams(client.client_id, {
              code_challenge_method: "plain",
              code_challenge: VERIFIER,
            }, alpha),
          ),
        expect: {
          status: 400,
          error: "invalid_request",
          description: /plain is not supported; use S256/,
          location: /state=xyz-state/,
        },
      },
      {
        name: "missing code_challenge",
        run: async () =>
          authorize(await authorizeParams(client.client_id, { code_challenge: undefined }, alpha)),
        expect: {
          status: 400,
          error: "invalid_request",
          description: /code_challenge is required/,
          location: /state=/,
        },
      },
      {
        name: "malformed code_challenge",
        run: async () =>
          authorize(await authorizeParams(client.client_id, { code_challenge: "short" }, alpha)),
        expect: {
          status: 400,
          error: "invalid_request",
          description: /43-character/,
          location: /state=/,
        },
      },
      {
        name: "missing state",
        run: async () =>
          authorize(await authorizeParams(client.client_id, { state: undefined }, alpha)),
        expect: {
          status: 400,
          error: "invalid_request",
          description: /state is required/,
          location: /^(?!.*state=)/,
        },
      },
      {
        name: "response_type token",
        run: async () =>
          authorize(await authorizeParams(client.client_id, { response_type: "token" }, alpha)),
        expect: {
          status: 400,
          error: "unsupported_response_type",
          description: /only response_type=code/,
          location: /state=/,
        },
      },

      // --- registration ---
      {
        name: "oversized registration",
        run: () => registration({ client_name: "x".repeat(20_000) }),
        expect: {
          status: 400,
          error: "invalid_client_metadata",
          description: /larger than 16384 bytes/,
        },
      },
      {
        name: "http redirect to a non-loopback host",
        run: () => registration({ redirect_uris: ["http://evil.example/cb"] }),
        expect: {
          status: 400,
          error: "invalid_redirect_uri",
          description: /must use https, or http on a loopback/,
        },
      },
      {
        name: "redirect with a fragment",
        run: () => registration({ redirect_uris: ["https://app.example/cb#x"] }),
        expect: { status: 400, error: "invalid_redirect_uri", description: /has a fragment/ },
      },
      {
        name: "javascript: redirect",
        run: () => registration({ redirect_uris: ["javascript:alert(1)"] }),
        expect: { status: 400, error: "invalid_redirect_uri", description: /must use https/ },
      },
      {
        name: "no redirect URIs",
        run: () => registration({ redirect_uris: [] }),
        expect: { status: 400, error: "invalid_redirect_uri", description: /at least one/ },
      },
      {
        name: "client_credentials registration",
        run: () => registration({ grant_types: ["client_credentials"] }),
        expect: {
          status: 400,
          error: "invalid_client_metadata",
          description: /client_credentials" is not supported/,
        },
      },
      {
        name: "implicit response type",
        run: () => registration({ response_types: ["token"] }),
        expect: {
          status: 400,
          error: "invalid_client_metadata",
          description: /response_types must be \["code"\]/,
        },
      },
      {
        name: "unsupported auth method",
        run: () => registration({ token_endpoint_auth_method: "private_key_jwt" }),
        expect: {
          status: 400,
          error: "invalid_client_metadata",
          description: /token_endpoint_auth_method must be one of/,
        },
      },
      {
        name: "not JSON",
        run: () => registration("{not json"),
        expect: { status: 400, error: "invalid_client_metadata", description: /not valid JSON/ },
      },
      {
        name: "redirect_uris not a list",
        run: () => registration({ redirect_uris: "https://app.example/cb" }),
        expect: {
          status: 400,
          error: "invalid_client_metadata",
          description: /must be an array of strings/,
        },
      },
    ];

    assert.ok(cases.length >= 40, `only ${cases.length} cases`);
    for (const c of cases) {
      await t.step(c.name, async () => {
        const answer = await c.run();
        assert.equal(
          answer.status,
          c.expect.status,
          `${c.name}: ${JSON.stringify(answer).slice(0, 300)}`,
        );
        if (c.expect.error !== undefined) assert.equal(answer.error, c.expect.error, c.name);
        assert.match(answer.description ?? "", c.expect.description, c.name);
        if (c.expect.location === null) {
          assert.equal(answer.location, undefined, "never redirected");
        } else if (c.expect.location) assert.match(answer.location ?? "", c.expect.location);
      });
    }
  } finally {
    await setup.close();
  }
});
