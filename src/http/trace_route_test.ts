import assert from "node:assert/strict";
import { httpRoute } from "./trace_route.ts";

Deno.test("httpRoute() names MCP endpoints with the server as a placeholder", () => {
  assert.equal(httpRoute("/github/mcp", "", "mcp", 200), "/{server}/mcp");
  assert.equal(httpRoute("/gw/github/message", "/gw", "message", 202), "/gw/{server}/message");
});

Deno.test("httpRoute() keeps the sign-in and token endpoints as they are", () => {
  for (const path of ["/token", "/register", "/revoke", "/authorize", "/authorize/consent"]) {
    assert.equal(httpRoute(path, "", "oauth", 200), path);
  }
  assert.equal(httpRoute("/oauth/callback", "", "oauth", 302), "/oauth/callback");
  assert.equal(httpRoute("/my/tokens/set", "", "page", 303), "/my/tokens/set");
});

Deno.test("httpRoute() puts placeholders where paths vary by client, service or resource", () => {
  assert.equal(httpRoute("/clients/abc123", "", "oauth", 200), "/clients/{client_id}");
  assert.equal(httpRoute("/oauth/callback/linear", "", "oauth", 302), "/oauth/callback/{service}");
  assert.equal(
    httpRoute("/.well-known/oauth-protected-resource/gw/github/mcp", "/gw", "oauth", 200),
    "/.well-known/oauth-protected-resource/{resource}",
  );
});

Deno.test("httpRoute() names no route for a 404 or a path the gateway does not serve", () => {
  assert.equal(httpRoute("/token", "", "oauth", 404), undefined);
  assert.equal(httpRoute("/wp-admin/setup.php", "", "other", 404), undefined);
  assert.equal(httpRoute("/oauth/x1", "", "oauth", 400), undefined);
});
