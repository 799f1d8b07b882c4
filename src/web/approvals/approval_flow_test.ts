import assert from "node:assert/strict";
import type { ApprovalRecord } from "../../mcp/approvals/approval_records.ts";
import { mayDecide } from "./approval_flow.ts";

function record(by: ApprovalRecord["by"]): ApprovalRecord {
  return {
    id: "x".repeat(43),
    status: "pending",
    person: { id: "oidc:alice", email: "alice@example.com" },
    server: "github",
    tool: "delete_repo",
    digest: "d",
    shown: {},
    by,
    requestedAt: 0,
    expiresAt: 1,
  };
}

const alice = { subject: "oidc:alice", email: "alice@example.com", groups: ["release-managers"] };
const bob = { subject: "oidc:bob", email: "bob@example.com", groups: ["release-managers"] };
const carol = { subject: "oidc:carol", email: "carol@example.com", groups: ["engineers"] };

Deno.test("mayDecide() with by: caller lets only the caller decide", () => {
  assert.equal(mayDecide(record("caller"), alice).ok, true);
  assert.equal(mayDecide(record("caller"), bob).ok, false);
});

Deno.test("mayDecide() with by: groups never lets the caller decide, even in the group", () => {
  const byGroup = record({ emails: [], groups: ["release-managers"] });
  assert.equal(mayDecide(byGroup, alice).ok, false);
  assert.equal(mayDecide(byGroup, bob).ok, true);
  assert.equal(mayDecide(byGroup, carol).ok, false);
});

Deno.test("mayDecide() with by: emails counts only a verified address", () => {
  const byEmail = record({ emails: ["carol@example.com"], groups: [] });
  assert.equal(mayDecide(byEmail, carol).ok, true);
  assert.equal(mayDecide(byEmail, { ...carol, emailVerified: false }).ok, false);
  assert.equal(mayDecide(byEmail, { ...carol, email: "Carol@Example.com" }).ok, true);
});

Deno.test("mayDecide() with by: groups refuses the caller under a second account of the same address", () => {
  const byGroup = record({ emails: ["alice@example.com"], groups: ["release-managers"] });
  const otherAlice = { ...alice, subject: "oidc:alice-second" };
  assert.equal(mayDecide(byGroup, otherAlice).ok, false);
  assert.equal(mayDecide(byGroup, { ...otherAlice, email: "ALICE@example.com" }).ok, false);
  assert.equal(mayDecide(byGroup, { ...otherAlice, emailVerified: false }).ok, true, "by group");
  assert.equal(mayDecide(byGroup, bob).ok, true);
});
