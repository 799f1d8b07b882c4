import assert from "node:assert/strict";
import { redirectUriProblem, validateRegistration } from "./clients.ts";
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
