/**
 * What a call through a remote MCP server behind its own OAuth (`userToken.kind: mcp`) costs once
 * the person is connected, against the same backend reached with a static bearer header: the
 * gateway's CPU per call (the whole process: the gateway, the client, the remote server and its
 * authorization server share it, so only the difference between the two rows is the gateway's),
 * and the round trips each call makes (to the remote server, to its authorization server).
 *
 *   deno task bench:remote [calls]
 */
import process from "node:process";
import { openTokensPage } from "../tests/fixtures/credential_gateway.ts";
import { connectWithOAuth } from "../tests/fixtures/oauth_client.ts";
import {
  connectTracker,
  remoteConfig,
  startRemoteGateway,
} from "../tests/fixtures/remote_gateway.ts";
import type { Client } from "../tests/fixtures/sdk.ts";
import { UserAgent } from "../tests/fixtures/user_agent.ts";

const CALLS = Number(Deno.args[0] ?? 2_000);
const WARMUP = 200;

const setup = await startRemoteGateway();
const agent = new UserAgent();
setup.idp.loginAs = { email: "bench@example.com", name: "Bench" };
await openTokensPage(agent, setup.url);
await connectTracker(setup, agent, "bench-at-tracker");
const tracker = (await connectWithOAuth(agent, `${setup.url}/tracker/mcp`)).client;
await tracker.callTool({ name: "whoami", arguments: {} });
const upstreamToken = setup.remote.authorizations.findLast((h) => h.startsWith("Bearer "))!;

// The same backend as a plain server with the person's upstream token in a static header.
await setup.gw.reload(
  remoteConfig(setup.url, setup.idp, setup.remote).replace(
    "  plain:\n",
    `  static:\n    transport: streamable-http\n    url: ${setup.remote.url}\n    headers: { Authorization: "${upstreamToken}" }\n  plain:\n`,
  ) + "rateLimits: { mcpPerUser: off, mcpPerClient: off }\n",
  { IDP_SECRET: setup.idp.clientSecret },
);
const fixed = (await connectWithOAuth(agent, `${setup.url}/static/mcp`)).client;

async function measure(label: string, client: Client) {
  for (let i = 0; i < WARMUP; i++) await client.callTool({ name: "whoami", arguments: {} });
  const upstreamBefore = setup.remote.authorizations.length;
  const grantsBefore = Object.values(setup.as.grants).reduce((a, b) => a + b, 0);
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < CALLS; i++) await client.callTool({ name: "whoami", arguments: {} });
  const wall = performance.now() - start;
  const used = process.cpuUsage(cpu);
  const upstream = (setup.remote.authorizations.length - upstreamBefore) / CALLS;
  const grants = Object.values(setup.as.grants).reduce((a, b) => a + b, 0) - grantsBefore;
  console.log(
    `${label.padEnd(34)} ${
      ((used.user + used.system) / CALLS).toFixed(0).padStart(5)
    } µs CPU/call  ${(wall / CALLS * 1000).toFixed(0).padStart(5)} µs/call  ${
      upstream.toFixed(2)
    } requests to the server/call  ${grants} token requests`,
  );
}

console.log(`tools/call through the gateway, ${CALLS} sequential calls each (after ${WARMUP})`);
await measure("static bearer header", fixed);
await measure("kind: mcp (the person's token)", tracker);
await measure("static bearer header (again)", fixed);
await tracker.close();
await fixed.close();
await setup.close();
