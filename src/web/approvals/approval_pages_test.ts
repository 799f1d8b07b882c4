import assert from "node:assert/strict";
import type { ApprovalRecord } from "../../mcp/approvals/approval_records.ts";
import { approvalListPage, approvalPage } from "./approval_pages.ts";

const RLO = "\u202e";
const record: ApprovalRecord = {
  id: "x".repeat(43),
  status: "pending",
  person: { id: "oidc:alice", email: `alice${RLO}@example.com` },
  client: `Claude${RLO}`,
  server: "files",
  tool: `delete${RLO}_file`,
  description: `Deletes${"\u200b"} a file`,
  digest: "d",
  // A path shown as "/srv/report.txt" by the override, though it is not that file.
  shown: { [`pa${RLO}th`]: `/srv/${RLO}txt.troper`, nested: [{ k: `a${"\u2066"}b` }] },
  by: { emails: [], groups: ["release-managers"] },
  requestedAt: 0,
  expiresAt: 60_000,
};
const ctx = { person: "bob@example.com", basePath: "", csrf: "t", now: 0 };

Deno.test("approvalPage() shows invisible and reordering characters others wrote as code points", async () => {
  const page = await (await approvalPage(record, { ok: true }, ctx)).text();
  assert.ok(!/[\u200b\u202e\u2066]/.test(page), "no such character reaches the page");
  assert.match(page, /\/srv\/⟨U\+202E⟩txt\.troper/);
  assert.match(page, /pa⟨U\+202E⟩th/);
  assert.match(page, /a⟨U\+2066⟩b/);
  assert.match(page, /delete⟨U\+202E⟩_file/);
  assert.match(page, /Deletes⟨U\+200B⟩ a file/);
  assert.match(page, /Claude⟨U\+202E⟩/);
});

Deno.test("approvalListPage() shows them as code points too", async () => {
  const page = await (await approvalListPage([record], [], ctx)).text();
  assert.ok(!/[\u202e]/.test(page));
  assert.match(page, /delete⟨U\+202E⟩_file/);
});

Deno.test("the client's registered name shows beside its id, isolated, its controls replaced", async () => {
  const named = { ...ctx, clientNames: new Map([[record.client!, `Good${RLO}lcaM\u0007`]]) };
  for (
    const page of [
      await (await approvalPage(record, { ok: true }, named)).text(),
      await (await approvalListPage([record], [], named)).text(),
    ]
  ) {
    // deno-lint-ignore no-control-regex
    assert.ok(!/[\u202e\u0007]/.test(page), "no control or reordering character reaches the page");
    assert.match(page, /<bdi>Good\ufffdlcaM\ufffd<\/bdi> \(<code>Claude⟨U\+202E⟩<\/code>\)/);
  }
  // Without a registered name, the id alone.
  const bare = await (await approvalPage(record, { ok: true }, ctx)).text();
  assert.ok(!bare.includes("<bdi>Good"));
});
