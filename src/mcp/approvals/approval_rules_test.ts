import assert from "node:assert/strict";
import { parseConfigText } from "../../config/load.ts";
import type { ServerConfig } from "../../config/types.ts";
import { ApprovalRules } from "./approval_rules.ts";

const config = parseConfigText(
  `servers:
  github:
    transport: stdio
    command: deno
    approvals:
      - tools: ["delete_*", merge_pull_request]
        by: caller
      - tools: ["*"]
        when: destructive
        by: { groups: [release-managers] }
  plain:
    transport: stdio
    command: deno
  work:
    transport: aggregate
    servers: [github, plain]
oauth:
  idp: { provider: oidc, issuer: "https://idp.example.com", clientId: g, clientSecret: "0123456789abcdef" }
  allow: { domains: [example.com] }
`,
  () => undefined,
);
const server = (name: string) => config.servers.get(name as never) as ServerConfig;

Deno.test("ApprovalRules.matching() names every rule for a tool, in order, and none for others", () => {
  const rules = ApprovalRules.for(server("github"), config.servers)!;
  assert.deepEqual(
    rules.matching("delete_repo").map((m) => [m.owner, m.tool, m.rule.by]),
    [["github", "delete_repo", "caller"], ["github", "delete_repo", {
      emails: [],
      groups: ["release-managers"],
    }]],
  );
  assert.equal(rules.matching("get_issue").length, 1, "only the destructive rule names it");
  assert.equal(rules.matching("merge_pull_request_x").length, 1, "patterns match whole names");
});

Deno.test("ApprovalRules.for() is undefined for a server no rule concerns", () => {
  assert.equal(ApprovalRules.for(server("plain"), config.servers), undefined);
});

Deno.test("ApprovalRules in an aggregate: a member's rules on the member's own names", () => {
  const rules = ApprovalRules.for(server("work"), config.servers)!;
  const matched = rules.matching("github.delete_repo");
  assert.deepEqual(matched.map((m) => [m.owner, m.tool]), [
    ["github", "delete_repo"],
    ["github", "delete_repo"],
  ]);
  assert.equal(rules.matching("plain.delete_repo").length, 0, "plain has no rules");
});

Deno.test("ApprovalRules in an aggregate: a member's tool called without its prefix meets its rules", () => {
  // The aggregate routes a bare name to the one member listing it (as an App calls its tools).
  const rules = ApprovalRules.for(server("work"), config.servers)!;
  assert.deepEqual(rules.matching("delete_repo").map((m) => [m.owner, m.tool]), [
    ["github", "delete_repo"],
    ["github", "delete_repo"],
  ]);
  assert.equal(
    rules.matching("plain.delete_repo").length,
    0,
    "a name in another member's namespace is that member's alone",
  );
});
