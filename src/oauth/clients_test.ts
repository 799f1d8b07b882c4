import assert from "node:assert/strict";
import { redirectUriMatches, redirectUriProblem, validateRegistration } from "./clients.ts";
import { OAuthError } from "./errors.ts";

Deno.test("redirectUriProblem() admits https and loopback http, and custom schemes only when listed", () => {
  assert.equal(redirectUriProblem("https://app.example.com/cb"), undefined);
  assert.equal(redirectUriProblem("http://127.0.0.1:33418/"), undefined);
  assert.equal(redirectUriProblem("http://localhost/cb"), undefined);
  assert.equal(redirectUriProblem("http://[::1]:9/cb"), undefined);
  assert.match(redirectUriProblem("cursor://anysphere.cursor-retrieval/oauth/callback")!, /https/);
  assert.equal(
    redirectUriProblem("cursor://anysphere.cursor-retrieval/oauth/callback", ["cursor"]),
    undefined,
  );
  assert.match(redirectUriProblem("http://127.0.0.1.evil.example/cb")!, /loopback/);
  assert.match(redirectUriProblem("https://user:pw@app.example.com/cb")!, /credentials/);
});

Deno.test("validateRegistration() fills RFC 7591 defaults and keeps the client's own fields", () => {
  const draft = validateRegistration({ redirect_uris: ["https://a.example/cb"], extra: 1 });
  assert.deepEqual(draft.grantTypes, ["authorization_code"]);
  assert.deepEqual(draft.responseTypes, ["code"]);
  assert.equal(draft.tokenEndpointAuthMethod, "client_secret_basic");
  assert.throws(
    () => validateRegistration({ redirect_uris: ["https://a.example/cb"], logo_uri: "http://x" }),
    (error: unknown) => error instanceof OAuthError && error.code === "invalid_client_metadata",
  );
});

Deno.test("redirectUriMatches() is exact, except that a loopback URI may name any port", () => {
  const cases: [string, string, boolean][] = [
    ["https://app.example.com/cb", "https://app.example.com/cb", true],
    ["https://app.example.com/cb", "https://app.example.com/cb/", false],
    ["https://app.example.com:8443/cb", "https://app.example.com:9443/cb", false],
    ["http://127.0.0.1/callback", "http://127.0.0.1:53412/callback", true],
    ["http://127.0.0.1:3000/callback", "http://127.0.0.1:53412/callback", true],
    ["http://[::1]/callback", "http://[::1]:53412/callback", true],
    ["http://localhost/callback", "http://localhost:53412/callback", true],
    ["http://127.0.0.1/callback", "http://localhost:53412/callback", false],
    ["http://127.0.0.1/callback", "http://127.0.0.1:53412/callback?x=1", false],
    ["http://127.0.0.1/callback", "http://127.0.0.1:53412/callback2", false],
    ["http://127.0.0.1/callback", "http://evil@127.0.0.1:53412/callback", false],
    ["http://127.0.0.1/callback", "https://127.0.0.1:53412/callback", false],
    ["cursor://anysphere/cb", "cursor://anysphere:1/cb", false],
  ];
  for (const [registered, given, expected] of cases) {
    assert.equal(redirectUriMatches(registered, given), expected, `${registered} vs ${given}`);
  }
});
