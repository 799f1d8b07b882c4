import assert from "node:assert/strict";
import type { ServerConfig } from "../config/types.ts";
import type { ServerName } from "../core/ids.ts";
import {
  type Caller,
  callerOfIdentity,
  compilePolicies,
  compileServerPolicy,
} from "./server_policy.ts";

/** A server as the configuration resolves it; only the policy's keys matter here. */
function server(policy: Pick<ServerConfig, "access" | "tools">, name = "files"): ServerConfig {
  return {
    name: name as ServerName,
    public: false,
    serviceAuths: [],
    transport: "stdio",
    command: "x",
    args: [],
    env: {},
    protocol: "auto",
    forwardRoots: true,
    secretValues: [],
    toolChanges: "allow",
    toolChangesDefaulted: true,
    share: "session",
    processes: 1,
    processIdleTimeoutMs: 300_000,
    ...policy,
  };
}

const ALICE: Caller = { email: "Alice@Example.com", groups: ["editors"] };
const BOB: Caller = { email: "bob@partner.org", groups: [] };
const CI: Caller = { groups: ["ci"] };
const NOBODY: Caller = {};

Deno.test("admits() applies access: any one entry admits, absent admits everyone", () => {
  const rows: {
    access?: ServerConfig["access"];
    caller: Caller;
    admitted: boolean;
    why: string;
  }[] = [
    { caller: NOBODY, admitted: true, why: "no access: everyone" },
    {
      access: { emails: ["alice@example.com"], domains: [], groups: [] },
      caller: ALICE,
      admitted: true,
      why: "the address, whatever its case",
    },
    {
      access: { emails: ["alice@example.com"], domains: [], groups: [] },
      caller: BOB,
      admitted: false,
      why: "another address",
    },
    {
      access: { emails: [], domains: ["example.com"], groups: [] },
      caller: ALICE,
      admitted: true,
      why: "the domain",
    },
    {
      access: { emails: [], domains: ["example.com"], groups: [] },
      caller: { email: "eve@mail.example.com" },
      admitted: false,
      why: "a subdomain is another domain",
    },
    {
      access: { emails: [], domains: ["example.com"], groups: [] },
      caller: { email: "eve@notexample.com" },
      admitted: false,
      why: "a domain that ends the same way",
    },
    {
      access: { emails: [], domains: ["example.com"], groups: [] },
      caller: { email: "eve@evil.org@example.com" },
      admitted: true,
      why: "the part after the last @ (what the provider vouched for)",
    },
    {
      access: { emails: [], domains: [], groups: ["editors"] },
      caller: ALICE,
      admitted: true,
      why: "a group",
    },
    {
      access: { emails: [], domains: [], groups: ["Editors"] },
      caller: ALICE,
      admitted: false,
      why: "groups compare exactly",
    },
    {
      access: { emails: [], domains: ["example.com"], groups: ["ci"] },
      caller: CI,
      admitted: true,
      why: "a service credential by its groups",
    },
    {
      access: { emails: [], domains: ["example.com"], groups: [] },
      caller: CI,
      admitted: false,
      why: "a service credential has no email",
    },
    {
      access: { emails: ["bob@partner.org"], domains: [], groups: ["editors"] },
      caller: BOB,
      admitted: true,
      why: "one entry of several",
    },
  ];
  for (const { access, caller, admitted, why } of rows) {
    const policy = compileServerPolicy(server({ access }));
    assert.equal(policy.admits(caller), admitted, why);
    assert.equal(policy.refusal(caller) === undefined, admitted, why);
  }
});

Deno.test("refusal() names the caller and the server and says whom to ask", () => {
  const policy = compileServerPolicy(
    server({ access: { emails: [], domains: ["example.com"], groups: [] } }),
  );
  assert.equal(
    policy.refusal(BOB),
    'bob@partner.org may not use the server "files"; ask the gateway\'s administrators for access',
  );
  assert.equal(
    policy.refusal(CI),
    'a caller without an email address may not use the server "files": its access: admits by email address or domain only, which a service credential does not have; list a group under access.groups and give it to the credential (groups: in serviceAuths)',
  );
});

Deno.test("refusal() tells a service credential which group it lacks, and which it has", () => {
  const policy = compileServerPolicy(
    server({ access: { emails: [], domains: ["example.com"], groups: ["billing", "finance"] } }),
  );
  assert.equal(
    policy.refusal({ groups: ["ci"] }),
    'a caller without an email address may not use the server "files": it needs one of the groups billing, finance, and this credential has none of them (its groups: ci); add one to the credential\'s groups: in serviceAuths',
  );
  assert.match(policy.refusal({})!, /has none of them \(it has no groups\)/);
  // A person is not shown the access list.
  assert.equal(
    policy.refusal({ email: "bob@partner.org", groups: [] }),
    'bob@partner.org may not use the server "files"; ask the gateway\'s administrators for access',
  );
});

Deno.test("mayUseTool() lets deny win, keeps to allow, and keeps rule tools for those every matching rule admits", () => {
  const editors = { emails: [], domains: [], groups: ["editors"] };
  const admins = { emails: ["root@example.com"], domains: [], groups: [] };
  const tools = {
    allow: ["get_*", "write_*", "echo", "*_admin"],
    deny: ["write_secrets", "delete_*"],
    rules: [{ tools: ["write_*"], access: editors }, { tools: ["*_admin"], access: admins }],
  };
  const policy = compileServerPolicy(server({ tools }));
  const ROOT: Caller = { email: "root@example.com" };
  const BOTH: Caller = { email: "root@example.com", groups: ["editors"] };
  const rows: [string, Caller, boolean, string][] = [
    ["get_issue", BOB, true, "allowed, no rule"],
    ["echo", CI, true, "allowed, no rule"],
    ["list_files", ALICE, false, "not allowed"],
    ["delete_file", ALICE, false, "denied, also not allowed"],
    ["write_file", ALICE, true, "a rule admits an editor"],
    ["write_file", BOB, false, "a rule keeps it from others"],
    ["write_secrets", ALICE, false, "deny wins over a rule"],
    ["user_admin", ROOT, true, "the admin rule"],
    ["write_admin", ROOT, false, "two rules match: the editors' one refuses"],
    ["write_admin", ALICE, false, "two rules match: the admins' one refuses"],
    ["write_admin", BOTH, true, "every matching rule admits"],
  ];
  for (const [tool, caller, may, why] of rows) {
    // Twice: the second answer comes from the cache of verdicts.
    assert.equal(policy.mayUseTool(caller, tool), may, `${tool}: ${why}`);
    assert.equal(policy.mayUseTool(caller, tool), may, `${tool} again: ${why}`);
  }
});

Deno.test("mayUseTool() admits every tool without a tools policy, and none with allow: []", () => {
  const open = compileServerPolicy(server({}));
  assert.equal(open.filtersTools, false);
  assert.equal(open.mayUseTool(NOBODY, "anything"), true);
  const closed = compileServerPolicy(server({ tools: { allow: [], deny: [], rules: [] } }));
  assert.equal(closed.filtersTools, true);
  assert.equal(closed.mayUseTool(ALICE, "echo"), false);
});

Deno.test("mayUseTool() answers the same for names past the cache's bounds", () => {
  const policy = compileServerPolicy(
    server({ tools: { deny: ["bad_*"], rules: [] } }),
  );
  for (let i = 0; i < 3_000; i++) {
    assert.equal(policy.mayUseTool(ALICE, `tool_${i}`), true);
  }
  assert.equal(policy.mayUseTool(ALICE, `bad_${"x".repeat(10_000)}`), false);
  assert.equal(policy.mayUseTool(ALICE, `good_${"x".repeat(10_000)}`), true);
});

Deno.test("filterTools() keeps the caller's tools in order, and the very array when nothing filters", () => {
  const list = [
    { name: "get_a", description: "kept as it is", _meta: { x: 1 } },
    { name: "write_a" },
    { name: 42 },
    null,
    { name: "get_b" },
  ];
  const policy = compileServerPolicy(server({
    tools: {
      deny: [],
      rules: [{ tools: ["write_*"], access: { emails: [], domains: [], groups: ["editors"] } }],
    },
  }));
  assert.deepEqual(policy.filterTools(BOB, list), [list[0], list[4]]);
  assert.deepEqual(policy.filterTools(ALICE, list), [list[0], list[1], list[4]]);
  const open = compileServerPolicy(server({}));
  assert.equal(open.filterTools(BOB, list), list);
});

Deno.test("compilePolicies() compiles each server once, by name", () => {
  const policies = compilePolicies([
    server({}, "alpha"),
    server({ access: { emails: [], domains: [], groups: ["x"] } }, "beta"),
  ]);
  assert.deepEqual([...policies.keys()], ["alpha", "beta"]);
  assert.equal(policies.get("alpha" as ServerName)!.admits(BOB), true);
  assert.equal(policies.get("beta" as ServerName)!.admits(BOB), false);
});

Deno.test("callerOfIdentity() drops an address the provider calls unverified", () => {
  assert.deepEqual(
    callerOfIdentity({ subject: "oidc:1", email: "a@example.com", groups: ["g"] }),
    { email: "a@example.com", groups: ["g"] },
  );
  assert.deepEqual(
    callerOfIdentity({ subject: "oidc:1", email: "a@example.com", emailVerified: true }),
    { email: "a@example.com" },
  );
  assert.deepEqual(
    callerOfIdentity({ subject: "oidc:1", email: "a@example.com", emailVerified: false }),
    {},
  );
});
