/**
 * What `approvals:` costs a call that no rule names: the session's call checks
 * (src/mcp/sessions/session_call_checks.ts) with the real holds of a server whose rules name
 * other tools, against the same checks on a server without approvals. Also the aggregate case:
 * five members, each with rules. No storage is touched on this path; the figure is the pattern
 * tests and the branch. `deno task bench:approvals [calls]`.
 */
import { parseConfigText } from "../src/config/load.ts";
import type { ServerConfig } from "../src/config/types.ts";
import { ServerName, userId } from "../src/core/ids.ts";
import { ApprovalBoard } from "../src/mcp/approvals/approval_board.ts";
import { ApprovalRecords } from "../src/mcp/approvals/approval_records.ts";
import { CallHolds } from "../src/mcp/approvals/call_hold.ts";
import { type CallChecks, callRefusal } from "../src/mcp/sessions/session_call_checks.ts";
import { OwnRequests } from "../src/mcp/tools/own_requests.ts";
import { openKvStore } from "../src/store/kv.ts";
import { testClock } from "../tests/fixtures/clock.ts";

const CALLS = Number(Deno.args[0] ?? 2_000_000);
const RULES = `
    approvals:
      - tools: ["delete_*", "merge_pull_request", "send_*"]
        by: caller
      - tools: ["*_admin"]
        by: { groups: [release-managers] }`;
const member = (name: string) => `  ${name}:\n    transport: stdio\n    command: deno${RULES}`;
const config = parseConfigText(
  `servers:
  plain:
    transport: stdio
    command: deno
${member("github")}
${["a", "b", "c", "d", "e"].map(member).join("\n")}
  all:
    transport: aggregate
    servers: [a, b, c, d, e]
oauth:
  idp: { provider: oidc, issuer: "https://idp.example.com", clientId: x, clientSecret: "0123456789abcdef" }
  allow: { domains: [example.com] }
`,
  () => undefined,
);
const clock = testClock();
const store = await openKvStore(":memory:");
const records = new ApprovalRecords(store, clock);
const holds = new CallHolds({
  records,
  board: new ApprovalBoard(records, clock),
  clock,
  baseUrl: "https://gw.example.com",
  perUser: 20,
  maxMessageBytes: 4 << 20,
  servers: config.servers,
  definition: () => Promise.resolve(undefined),
  events: {} as never,
});
const principal = { id: userId("oidc:alice") };
const side = { deliver() {}, capabilities: () => ({}) };

function checksFor(name: string): CallChecks {
  const server = config.servers.get(name as ServerName) as ServerConfig;
  return {
    server: name,
    own: new OwnRequests(clock, 60_000),
    holds: holds.forSession(server, principal)?.(side),
  };
}

function perCall(checks: CallChecks, tool: string): number {
  const request = {
    jsonrpc: "2.0" as const,
    id: 1,
    method: "tools/call",
    params: { name: tool, arguments: { path: "/srv/report.txt", limit: 10 } },
  };
  for (let i = 0; i < 100_000; i++) callRefusal(request, checks);
  const start = performance.now();
  for (let i = 0; i < CALLS; i++) {
    if (callRefusal(request, checks) !== undefined) throw new Error(`${tool} was held`);
  }
  return (performance.now() - start) * 1e6 / CALLS;
}

const rows: [string, number][] = [
  ["no approvals: on the server", perCall(checksFor("plain"), "get_issue")],
  ["approvals:, no rule names the tool", perCall(checksFor("github"), "get_issue")],
  ["aggregate, 5 members with rules, none names it", perCall(checksFor("all"), "c.get_issue")],
];
console.log(`| case | ns a call (${CALLS.toLocaleString("en")} calls) |\n| --- | ---: |`);
for (const [name, ns] of rows) console.log(`| ${name} | ${ns.toFixed(0)} |`);
store.close();
