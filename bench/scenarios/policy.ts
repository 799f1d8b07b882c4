/**
 * Scenario 9: what access policies cost a call. The same allowed `tools/call` through two
 * servers in front of one minimal HTTP backend: one with no policy, one with a policy of 100
 * rules (an `access` list of 100 groups, 100 tool rules, the called tool under one of them,
 * the caller in its group). Rounds alternate; the target is no measurable difference (within
 * the run's noise, taken as 5%). Beside it, the policy's own cost in process: the server's
 * access check and the call's tool check, compiled as the gateway compiles them.
 */
import { BENCH_TOKEN, startGateway, startMinimalBackend } from "../lib/gateway.ts";
import { type LoadResult, medianOf, openSession, request, runLoad } from "../lib/load.ts";
import type { Results } from "../lib/report.ts";
import type { ServerConfig } from "../../src/config/types.ts";
import { compilePolicies } from "../../src/policy/server_policy.ts";
import { toolGateFor } from "../../src/policy/tool_gates.ts";

const ROUNDS = 3;
const RULES = 100;

/** Nanoseconds one allowed call spends in the access and tool checks of a 100-rule policy. */
function evaluationNs(): number {
  const groups = Array.from({ length: RULES }, (_, i) => `group-${i}`);
  const anyone = { emails: [], domains: [] };
  const server = {
    name: "ruled",
    transport: "stdio",
    access: { ...anyone, groups },
    tools: {
      deny: [],
      rules: groups.map((group, i) => ({
        tools: [i === RULES / 2 ? "echo" : `tool_${i}_*`],
        access: { ...anyone, groups: [group] },
      })),
    },
  } as unknown as ServerConfig;
  const policies = compilePolicies([server]);
  const policy = policies.get(server.name)!;
  const caller = { groups: [`group-${RULES / 2}`] };
  const gate = toolGateFor(policies, server, caller)!;
  let allowed = 0;
  const run = (n: number) => {
    for (let i = 0; i < n; i++) if (policy.admits(caller) && gate.allows("echo")) allowed++;
  };
  run(100_000);
  const n = 1_000_000;
  const started = performance.now();
  run(n);
  const ns = (performance.now() - started) * 1e6 / n;
  if (allowed !== n + 100_000) throw new Error("the bench's call was not allowed");
  return ns;
}

export async function policyCost(results: Results, calls: number): Promise<void> {
  results.add({
    scenario: "9 policy",
    case: `policy evaluation alone, ${RULES} rules, allowed call`,
    value: Math.round(evaluationNs()),
    unit: "ns",
  });
  const backend = await startMinimalBackend();
  const groups = Array.from({ length: RULES }, (_, i) => `group-${i}`);
  const rules = groups.map((group, i) =>
    `        - { tools: ["${
      i === RULES / 2 ? "echo" : `tool_${i}_*`
    }"], access: { groups: [${group}] } }`
  ).join("\n");
  const auth = `serviceAuths: [{ type: bearer, tokens: ["${BENCH_TOKEN}"], groups: [group-${
    RULES / 2
  }] }]`;
  const gateway = await startGateway(`  plain:
    transport: streamable-http
    url: ${backend.url}
    ${auth}
  ruled:
    transport: streamable-http
    url: ${backend.url}
    ${auth}
    access: { groups: [${groups.join(", ")}] }
    tools:
      rules:
${rules}
`);
  try {
    const headers = { authorization: `Bearer ${BENCH_TOKEN}` };
    const endpoints = ["plain", "ruled"].map((name) => ({
      url: `${gateway.url}/${name}/mcp`,
      headers,
    }));
    for (const concurrency of [1, 50]) {
      const rounds: LoadResult[][] = [[], []];
      for (let round = 0; round < ROUNDS; round++) {
        for (const [i, endpoint] of endpoints.entries()) {
          rounds[i].push(
            await runLoad({
              endpoint,
              session: await openSession(endpoint),
              body: () => request("tools/call", { name: "echo", arguments: { n: 1 } }),
              calls: Math.ceil(calls / ROUNDS),
              concurrency,
              watch: { gateway: gateway.pid, backend: backend.pid },
            }),
          );
        }
      }
      const [plain, ruled] = rounds.map(medianOf);
      const scenario = "9 policy";
      for (const [name, result] of [["no policy", plain], [`${RULES} rules`, ruled]] as const) {
        const cpu = result.cpuPerCall.gateway;
        const base = plain.cpuPerCall.gateway;
        results.add({
          scenario,
          case: `allowed call, ${name}, c=${concurrency}`,
          rate: result.rate,
          p50: result.p50,
          p99: result.p99,
          proxyCpuUs: cpu,
          backendCpuUs: result.cpuPerCall.backend,
          ...(result === ruled && {
            target: `gateway CPU within 5% of no policy (${base.toFixed(0)} µs)`,
            met: cpu <= base * 1.05,
          }),
        });
      }
    }
  } finally {
    await gateway.stop();
    await backend.stop();
  }
}
