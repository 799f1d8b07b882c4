import assert from "node:assert/strict";
import { myTokensPage, noticeFor } from "./token_pages.ts";
import type { CredentialService } from "../credentials/user_credentials.ts";

const HOSTILE: CredentialService = {
  name: "notion",
  userToken: {
    kind: "manual",
    displayName: '<script>alert("name")</script>',
    instructions: '<img src=x onerror="alert(1)">',
  },
};

Deno.test("myTokensPage() escapes configured names and instructions and sets a strict CSP", async () => {
  const response = await myTokensPage(
    [{ service: HOSTILE, status: { state: "missing" } }],
    {
      person: "<b>eve</b>@example.com",
      basePath: "",
      csrf: "csrf-token",
      next: "tokens",
      notice: noticeFor("pattern", HOSTILE),
    },
  );
  const body = await response.text();
  assert.ok(!body.includes("<script>alert"));
  assert.ok(!body.includes("<img src=x"));
  assert.ok(!body.includes("<b>eve</b>"));
  assert.match(body, /&lt;script&gt;alert\(&quot;name&quot;\)&lt;\/script&gt; token/);
  assert.match(response.headers.get("content-security-policy")!, /default-src 'none'/);
  assert.equal(response.headers.get("cache-control"), "no-store");
});

Deno.test("noticeFor() knows only its own codes and services", () => {
  assert.equal(noticeFor("saved", undefined), undefined);
  assert.equal(noticeFor("<script>", HOSTILE), undefined);
  assert.equal(noticeFor("constructor", HOSTILE), undefined);
  assert.deepEqual(
    noticeFor("deleted", { ...HOSTILE, userToken: { kind: "manual", displayName: "Notion" } }),
    {
      ok: true,
      text: "Your Notion token is deleted.",
    },
  );
});
