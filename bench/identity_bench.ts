/**
 * What identity to backends costs (docs/identity.md), on the gateway as users run it:
 *
 * 1. CPU per proxied `tools/call` at c=50 to one minimal HTTP backend without `identity:`, with
 *    `identity.headers`, and with `identity.assertion` as well (an ES256 assertion reused per
 *    person and server for a minute, so nearly every call only looks it up); runs alternate,
 *    three rounds, medians.
 * 2. `userToken.kind: exchange` at c=1 against the same backend without a person's token: the
 *    exchanged token from the cache (the common case), and with the IdP issuing tokens too short
 *    to keep, so that every call is an RFC 8693 exchange at the test IdP (oidc-provider).
 *
 *   deno task bench:identity [--calls N]
 */
import { BENCH_TOKEN, ROOT, startGateway } from "./lib/gateway.ts";
import {
  type Endpoint,
  type LoadResult,
  medianOf,
  openSession,
  request,
  runLoad,
} from "./lib/load.ts";
import { startListening } from "./lib/processes.ts";
import { exchangePolicy } from "../tests/fixtures/idp_exchange.ts";

const ROUNDS = 3;
const callsArg = Deno.args.indexOf("--calls");
const CALLS = callsArg >= 0 ? Number(Deno.args[callsArg + 1]) : 6_000;

const backend = await startListening(
  ["--allow-net", `${ROOT}bench/backends/minimal_http.ts`, "0", "json"],
  "/mcp",
);
const policy = await exchangePolicy(["ledger-api"]);
const entry = (name: string, extra: string) =>
  `  ${name}:
    transport: streamable-http
    url: ${backend.url}
${extra}`;
const bearer = `    serviceAuths: [{ type: bearer, tokens: ["${BENCH_TOKEN}"] }]\n`;
const exchange = (name: string) =>
  entry(
    name,
    `    requiresUserToken: true\n    userToken: { kind: exchange, audience: ledger-api }\n`,
  );
const gateway = await startGateway(
  entry("plain", bearer) +
    entry("headers", `${bearer}    identity: { headers: true }\n`) +
    entry("assertion", `${bearer}    identity: { headers: true, assertion: true }\n`) +
    entry("direct", "") + exchange("cached") + exchange("uncached"),
  { oauth: true, idp: { refreshTokens: true, exchange: policy } },
);

function format(result: LoadResult): string {
  return `${result.cpuPerCall.gateway.toFixed(1)} µs CPU/call, p50 ${result.p50.toFixed(2)} ms, ` +
    `p99 ${result.p99.toFixed(2)} ms, ${Math.round(result.rate)} calls/s`;
}

async function measure(endpoint: Endpoint, calls: number, concurrency: number) {
  return await runLoad({
    endpoint,
    session: await openSession(endpoint),
    body: () => request("tools/call", { name: "echo", arguments: { n: 1 } }),
    calls,
    concurrency,
    watch: { gateway: gateway.pid },
  });
}

try {
  console.log(
    `identity to backends: CPU per proxied call, c=50, ${CALLS} calls a run, medians of ${ROUNDS}`,
  );
  const names = ["plain", "headers", "assertion"];
  const rounds: LoadResult[][] = names.map(() => []);
  // Round 0 warms every path (JIT, pools, the signing key read from storage) and is not counted.
  for (let round = 0; round <= ROUNDS; round++) {
    for (const [i, name] of names.entries()) {
      const endpoint = {
        url: `${gateway.url}/${name}/mcp`,
        headers: { authorization: `Bearer ${BENCH_TOKEN}` },
      };
      const result = await measure(endpoint, CALLS, 50);
      if (round > 0) rounds[i].push(result);
    }
  }
  const [plain, headers, assertion] = rounds.map(medianOf);
  console.log(`  without identity:       ${format(plain)}`);
  console.log(`  identity.headers:       ${format(headers)}`);
  console.log(`  + identity.assertion:   ${format(assertion)}`);
  const added = assertion.cpuPerCall.gateway - plain.cpuPerCall.gateway;
  console.log(`  assertion and headers add ${added.toFixed(1)} µs CPU per call`);

  const exchangeCalls = Math.max(1_000, Math.round(CALLS / 6));
  console.log(`\nuserToken.kind: exchange, c=1, ${exchangeCalls} calls a run`);
  const cachedToken = await gateway.accessToken("cached");
  const uncachedToken = await gateway.accessToken("uncached");
  const plainToken = await gateway.accessToken("direct");
  const pair = [
    { url: `${gateway.url}/direct/mcp`, headers: { authorization: `Bearer ${plainToken}` } },
    { url: `${gateway.url}/cached/mcp`, headers: { authorization: `Bearer ${cachedToken}` } },
  ];
  const pairRounds: LoadResult[][] = [[], []];
  for (let round = 0; round <= ROUNDS; round++) {
    for (const [i, endpoint] of pair.entries()) {
      const result = await measure(endpoint, exchangeCalls, 1);
      if (round > 0) pairRounds[i].push(result);
    }
  }
  const [none, cached] = pairRounds.map(medianOf);
  // Tokens that live 30 s are kept for none of it (the 30 s margin): every call exchanges.
  policy.lifetime = 30;
  const before = policy.issued;
  const uncached = await measure(
    {
      url: `${gateway.url}/uncached/mcp`,
      headers: { authorization: `Bearer ${uncachedToken}` },
    },
    exchangeCalls,
    1,
  );
  const exchanges = policy.issued - before;
  console.log(`  no person's token:      ${format(none)}`);
  console.log(`  exchanged, cached:      ${format(cached)}`);
  console.log(`  exchanged every call:   ${format(uncached)} (${exchanges} exchanges at the IdP)`);
} finally {
  await gateway.stop();
  await backend.stop();
}
