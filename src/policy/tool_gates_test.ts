import assert from "node:assert/strict";
import type { ServerConfig } from "../config/types.ts";
import { compilePolicies } from "./server_policy.ts";
import { toolGateFor } from "./tool_gates.ts";

const server = (name: string, extra: Partial<ServerConfig> = {}) =>
  ({ name, transport: "stdio", serviceAuths: [], public: false, ...extra }) as ServerConfig;
const aggregate = (members: string[], delimiter = ".") =>
  ({ ...server("all"), transport: "aggregate", members, delimiter }) as ServerConfig;

Deno.test("toolGateFor() is undefined when no policy filters tools, so sessions check nothing", () => {
  const policies = compilePolicies([server("a"), server("b")]);
  assert.equal(toolGateFor(policies, server("a"), {}), undefined);
  assert.equal(toolGateFor(policies, aggregate(["a", "b"]), {}), undefined);
});

Deno.test("toolGateFor() applies a server's own deny, allow and group rules by name", () => {
  const a = server("a", {
    tools: {
      allow: ["get_*", "write_*"],
      deny: ["get_secret"],
      rules: [{ tools: ["write_*"], access: { emails: [], domains: [], groups: ["editors"] } }],
    },
  });
  const policies = compilePolicies([a]);
  const reader = toolGateFor(policies, a, { groups: ["readers"] })!;
  const editor = toolGateFor(policies, a, { groups: ["editors"] })!;
  assert.deepEqual(
    ["get_issue", "get_secret", "write_issue", "delete_issue"].map((n) => reader.allows(n)),
    [true, false, false, false],
  );
  assert.equal(editor.allows("write_issue"), true);
  assert.equal(editor.allows("get_secret"), false);
});

Deno.test("toolGateFor() applies each aggregate member's policy to the member's own tool names", () => {
  const deny = { deny: ["delete_*", "b_delete_*"], rules: [] };
  const policies = compilePolicies([server("a", { tools: deny }), server("a_b"), aggregate([])]);
  const gate = toolGateFor(policies, aggregate(["a", "a_b"], "_"), {})!;
  assert.equal(gate.allows("a_delete_x"), false);
  assert.equal(gate.allows("a_read_x"), true);
  // Both "a_" and "a_b_" begin it: the longer names the member (a_b, which denies nothing).
  assert.equal(gate.allows("a_b_delete_x"), true);
});

Deno.test("toolGateFor() refuses every tool of an aggregate member whose access refuses the caller", () => {
  const billing = server("billing", { access: { emails: [], domains: [], groups: ["finance"] } });
  const policies = compilePolicies([billing, server("docs"), aggregate([])]);
  const all = aggregate(["billing", "docs"]);
  const outsider = toolGateFor(policies, all, { email: "bob@example.com", groups: [] })!;
  assert.deepEqual(
    ["billing.add", "docs.read", "other.tool"].map((name) => outsider.allows(name)),
    [false, true, true],
  );
  assert.equal(toolGateFor(policies, all, { groups: ["finance"] }), undefined);
});

Deno.test("toolGateFor() judges an aggregate tool called by its member's own name (an App's call) as that member's tool", () => {
  const only = (members: string[], tools: ServerConfig["tools"]) => {
    const all = { ...aggregate(members), tools } as ServerConfig;
    return toolGateFor(compilePolicies([server("react"), server("vue"), all]), all, {})!;
  };
  // The aggregate's patterns name member.tool: an App's "get-time" is react.get-time or vue's.
  const reactOnly = only(["react", "vue"], { allow: ["react.*"], deny: [], rules: [] });
  assert.deepEqual(
    ["get-time", "react.get-time", "vue.get-time"].map((name) => reactOnly.allows(name)),
    [true, true, false],
  );
  const denied = only(["react"], { deny: ["react.get-time"], rules: [] });
  assert.deepEqual(["get-time", "react.other"].map((name) => denied.allows(name)), [false, true]);
});
