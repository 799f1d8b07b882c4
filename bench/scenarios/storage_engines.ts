/**
 * Scenario 14: the storage engines side by side in one run, a Deno KV file and a real
 * PostgreSQL (tests/fixtures/postgres.ts starts one on this machine: fsync off, over TCP on
 * 127.0.0.1, so a lower bound of a database across a network):
 *   - token issue in process: the code exchange (code redeemed, grant opened, access and refresh
 *     token) and the refresh (rotation) per second and p50, one call after the other;
 *   - revocation across replicas: a second replica's poll (epoch read, and the listing once it
 *     moved) p50; revocation-to-effect is the poll interval (2 s) plus this;
 *   - a proxied tools/call through a gateway process with a static bearer token: CPU µs per call
 *     and p50 (goal: the same on both, since a call does not touch storage).
 */
import { BENCH_TOKEN, startGateway, startMinimalBackend } from "../lib/gateway.ts";
import { openSession, request, runLoad } from "../lib/load.ts";
import type { Results } from "../lib/report.ts";
import { median, timeCalls } from "../lib/timing.ts";
import {
  codeForm,
  exchange,
  issueCode,
  openAuthParts,
  refreshForm,
  registerClient,
} from "../../tests/fixtures/auth_parts.ts";
import { startPostgres } from "../../tests/fixtures/postgres.ts";
import { systemClock } from "../../src/core/clock.ts";
import { openStorage } from "../../src/store/open.ts";
import { PostgresStore } from "../../src/store/postgres.ts";
import type { Store } from "../../src/store/store.ts";

const SCENARIO = "14 storage: KV file vs PostgreSQL";

async function timed(
  results: Results,
  label: string,
  calls: number,
  call: (i: number) => Promise<unknown>,
): Promise<void> {
  results.add({ scenario: SCENARIO, case: label, ...(await timeCalls(calls, call)) });
}

async function closeStore(store: Store): Promise<void> {
  if (store instanceof PostgresStore) await store.closed();
  else store.close();
}

export async function storageEngines(results: Results, calls: number): Promise<void> {
  const postgres = await startPostgres();
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-bench-storage-" });
  const backend = await startMinimalBackend();
  try {
    const engines = [
      { name: "KV file", storage: `${dir}/gatehouse.kv` },
      { name: "PostgreSQL", storage: await postgres.createDatabase() },
    ];
    const rounds = Math.min(calls, 1_000);
    for (const engine of engines) {
      const open = () => openStorage(engine.storage, { clock: systemClock, sweep: false });
      await tokenIssue(results, engine.name, await open(), rounds);
      await revocationPoll(results, engine.name, await open(), await open(), Math.min(rounds, 300));
    }
    for (const engine of engines) {
      const gateway = await startGateway(
        `  api:
    transport: streamable-http
    url: ${backend.url}
    serviceAuths: [{ type: bearer, tokens: ["${BENCH_TOKEN}"] }]
`,
        { storage: engine.storage },
      );
      try {
        const endpoint = {
          url: `${gateway.url}/api/mcp`,
          headers: { authorization: `Bearer ${BENCH_TOKEN}` },
        };
        const load = await runLoad({
          endpoint,
          session: await openSession(endpoint),
          body: () => request("tools/call", { name: "echo", arguments: { n: 1 } }),
          calls,
          concurrency: 10,
          watch: { gateway: gateway.pid },
        });
        results.add({
          scenario: SCENARIO,
          case: `${engine.name}: proxied tools/call, c=10`,
          rate: load.rate,
          p50: load.p50,
          p99: load.p99,
          proxyCpuUs: load.cpuPerCall.gateway,
        });
      } finally {
        await gateway.stop();
      }
    }
  } finally {
    await backend.stop();
    await postgres.close();
    await Deno.remove(dir, { recursive: true });
  }
}

async function tokenIssue(results: Results, engine: string, store: Store, rounds: number) {
  const parts = await openAuthParts({ store });
  try {
    const { client } = await registerClient(parts);
    const codes = await Promise.all(
      Array.from({ length: rounds }, () => issueCode(parts, client)),
    );
    const refreshTokens: string[] = [];
    await timed(results, `${engine}: code exchange`, rounds, async (i) => {
      const answer = await exchange(parts, codeForm(client, codes[i]));
      refreshTokens.push(answer.refresh_token!);
    });
    await timed(results, `${engine}: refresh (rotation)`, rounds, async (i) => {
      await exchange(parts, refreshForm(client, refreshTokens[i]));
    });
  } finally {
    await parts.revocations.close();
    await closeStore(store);
  }
}

/** Replica A revokes, replica B polls: what B's poll costs, with and without news. */
async function revocationPoll(
  results: Results,
  engine: string,
  storeA: Store,
  storeB: Store,
  rounds: number,
) {
  const a = await openAuthParts({ store: storeA });
  const b = await openAuthParts({ store: storeB });
  try {
    await b.revocations.refresh();
    const quiet: number[] = [];
    const moved: number[] = [];
    for (let i = 0; i < rounds; i++) {
      let at = performance.now();
      await b.revocations.refresh();
      quiet.push(performance.now() - at);
      const familyId = `bench-family-${i}`;
      await a.grants.revokeFamily(familyId);
      at = performance.now();
      await b.revocations.refresh();
      moved.push(performance.now() - at);
      if (!b.revocations.has(familyId)) throw new Error(`replica B missed revocation ${i}`);
    }
    for (const [label, durations] of [["nothing new", quiet], ["after a revocation", moved]]) {
      results.add({
        scenario: SCENARIO,
        case: `${engine}: revocation poll on another replica, ${label}`,
        p50: median(durations as number[]),
      });
    }
  } finally {
    await a.revocations.close();
    await b.revocations.close();
    await closeStore(storeA);
    await closeStore(storeB);
  }
}
