import assert from "node:assert/strict";
import { memberUiUri, uiUriKey } from "./mcp_apps.ts";

Deno.test("uiUriKey() gives every spelling a URL reader takes for one UI the same key", () => {
  const key = uiUriKey("ui://get-time/mcp-app.html");
  assert.equal(key, "ui://get-time/mcp-app.html");
  for (
    const spelled of [
      "UI://get-time/mcp-app.html",
      " ui://get-time/mcp-app.html\t",
      "ui://get-time/x/../mcp-app.html",
      "ui://get-time/x/%2e%2E/./mcp-app.html",
      "ui://get-time/mcp%2Dapp.html",
      "ui://get-time/mcp-app.html#frame",
    ]
  ) assert.equal(uiUriKey(spelled), key, spelled);
  // Another host is another UI (a URL reader keeps a ui:// host's case), and other schemes none.
  assert.notEqual(uiUriKey("ui://Get-time/mcp-app.html"), key);
  assert.equal(uiUriKey("https://get-time/mcp-app.html"), undefined);
  assert.equal(uiUriKey(42), undefined);
  assert.equal(uiUriKey("ui://a\\b%zz"), "ui://a\\b%zz", "unparsable, kept as sent");
});

Deno.test("memberUiUri() passes the member's part on as sent, for members that look URIs up as strings", () => {
  const members = new Set(["react"]);
  assert.deepEqual(memberUiUri("ui://react/w/A B.html", members), {
    member: "react",
    uri: "ui://w/A B.html",
  });
  assert.deepEqual(memberUiUri("UI://react/w/app.html", members), {
    member: "react",
    uri: "ui://w/app.html",
  });
  assert.equal(memberUiUri("ui://vue/w/app.html", members), undefined);
  assert.equal(memberUiUri("ui://react", members), undefined);
});
