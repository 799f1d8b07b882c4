import assert from "node:assert/strict";
import { accessRefusedPage, consentPage } from "./pages.ts";
import { myAccessPage } from "./access_pages.ts";
import type { GrantView } from "../oauth/grant_admin.ts";

/** A name that, shown as given, reads "Gatehouse Admin" and hides what follows U+202E. */
const REORDERING = "Gatehouse Admin\u202e\u2066 moc.live\u2069\u0007";
// deno-lint-ignore no-control-regex
const BIDI_OR_CONTROL = /[\u0000-\u001f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

Deno.test("consentPage() shows a client's chosen name isolated, its bidi and control characters replaced", async () => {
  const page = await (await consentPage({
    person: "alice@example.com",
    clientName: REORDERING,
    clientId: "gh_x",
    redirectUri: "https://app.example/cb",
    services: ["alpha"],
    requestId: "r",
    csrf: "c",
    action: "/authorize/consent",
  })).text();
  const body = page.replace(/<style[\s\S]*?<\/style>/g, "");
  assert.ok(
    !BIDI_OR_CONTROL.test(body.replace(/\n/g, "")),
    "no bidi or control character reaches the page",
  );
  assert.match(
    body,
    /Allow <bdi>Gatehouse Admin\ufffd\ufffd moc\.live\ufffd\ufffd<\/bdi> to use your tools\?/,
  );
});

Deno.test("accessRefusedPage() and /my/access isolate a client's chosen name and id the same way", async () => {
  const refused = await (await accessRefusedPage({
    person: "alice@example.com",
    server: "alpha",
    requested: ["alpha"],
    clientName: REORDERING,
    returnTo: "https://app.example/cb?error=access_denied",
  })).text();
  assert.ok(!BIDI_OR_CONTROL.test(refused.replace(/\n/g, "")));
  assert.match(refused, /<bdi>Gatehouse Admin\ufffd/);
  const grant = {
    id: "g1",
    clientName: REORDERING,
    clientId: "https://evil.example/\u202eclient.json",
  } as unknown as GrantView;
  const access = await (await myAccessPage([grant], {
    person: "alice@example.com",
    basePath: "",
    csrf: "c",
    servers: () => ["alpha"],
  })).text();
  assert.ok(!BIDI_OR_CONTROL.test(access.replace(/\n/g, "")));
  assert.match(access, /<h2 id="grant-title-g1"><bdi>Gatehouse Admin\ufffd/);
  assert.match(access, /<code><bdi>https:\/\/evil\.example\/\ufffdclient\.json<\/bdi><\/code>/);
});

Deno.test("myAccessPage() says when the company's identity provider allowed a grant (ID-JAG)", async () => {
  const grant = (id: string, issuedVia: GrantView["issuedVia"]): GrantView => ({
    id,
    clientId: "chat-app",
    clientName: "Chat",
    audience: ["https://gw.example.com/alpha"],
    grantedAt: Date.UTC(2026, 0, 2),
    expiresAt: Date.UTC(2026, 1, 2),
    issuedVia,
  });
  const page =
    await (await myAccessPage([grant("g1", "id-jag"), grant("g2", "authorization_code")], {
      person: "alice@example.com",
      basePath: "",
      csrf: "c",
      servers: () => ["alpha"],
    })).text();
  const sections = page.split('<section class="service"').slice(1);
  assert.equal(sections.length, 2);
  assert.match(sections[0], /Allowed by your company&#39;s identity provider 2026-01-02/);
  assert.match(sections[1], /Allowed 2026-01-02/);
});
