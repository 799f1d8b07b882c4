import assert from "node:assert/strict";
import { ConfigError, type ConfigIssue } from "./issues.ts";
import { parseConfigText } from "./load.ts";

const OAUTH = `oauth:
  idp: { provider: oidc, issuer: "https://idp.example.com", clientId: g, clientSecret: "0123456789abcdef" }
  allow: { domains: [example.com] }
`;

function server(approvals: string, oauth = OAUTH): string {
  return `servers:
  github:
    transport: stdio
    command: deno
    approvals:
${approvals}
${oauth}`;
}

function issuesOf(yaml: string): Pick<ConfigIssue, "path" | "message">[] {
  try {
    parseConfigText(yaml, () => undefined, "config.yaml");
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.issues.map(({ path, message }) => ({ path, message }));
  }
  assert.fail("the document was accepted");
}

Deno.test("parseApprovals() resolves rules with their defaults", () => {
  const config = parseConfigText(
    server(`      - tools: ["delete_*", merge_pull_request]
        by: caller
      - when: destructive
        by: { groups: [release-managers], emails: [Ops@Example.com] }
        timeout: 1h
        notify: https://hooks.example.com/x`),
    () => undefined,
  );
  assert.deepEqual(config.servers.get("github" as never)?.approvals, [
    {
      tools: ["delete_*", "merge_pull_request"],
      destructiveOnly: false,
      by: "caller",
      timeoutMs: 600_000,
    },
    {
      tools: ["*"],
      destructiveOnly: true,
      by: { emails: ["ops@example.com"], groups: ["release-managers"] },
      timeoutMs: 3_600_000,
      notify: "https://hooks.example.com/x",
    },
  ]);
  assert.equal(config.limits.pendingApprovalsPerUser, 20);
});

Deno.test("parseApprovals() reports each mistake with its path", () => {
  const issues = issuesOf(server(`      - tools: ["delete_*"]
      - tools: ["[a-z]+"]
        by: everyone
      - by: {}
        when: always
        timeout: 2d
        notify: http://hooks.example.com/x`));
  assert.deepEqual(issues, [
    { path: ["servers", "github", "approvals", 0, "by"], message: "is required" },
    {
      path: ["servers", "github", "approvals", 1, "tools", 0],
      message: 'not a tool pattern: "[a-z]+"',
    },
    {
      path: ["servers", "github", "approvals", 1, "by"],
      message: 'expected caller or a mapping, got "everyone"',
    },
    { path: ["servers", "github", "approvals", 2, "when"], message: 'unknown condition "always"' },
    { path: ["servers", "github", "approvals", 2, "by"], message: "names nobody" },
    { path: ["servers", "github", "approvals", 2, "timeout"], message: "is longer than a day" },
    { path: ["servers", "github", "approvals", 2, "notify"], message: "must be an https URL" },
  ]);
});

Deno.test("parseApprovals() needs oauth: (people sign in to approve)", () => {
  const issues = issuesOf(`servers:
  github:
    transport: stdio
    command: deno
    public: true
    approvals: [{ tools: ["*"], by: caller }]
`);
  assert.deepEqual(issues, [{
    path: ["servers", "github", "approvals"],
    message: "needs oauth: (people sign in to Gatehouse's page to approve a held call)",
  }]);
});
