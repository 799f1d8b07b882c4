/**
 * The operator console's overview with 50 servers and 1,000 live sessions, each server with a
 * full hour of calls in its window: how long one render takes (all of it on the gateway's one
 * thread, which the proxy shares). The sources are the real ones (app_console.ts) over a
 * registry standing in for 1,000 sessions, a real call window and the real page code.
 */
import { consoleSources } from "../src/app_console.ts";
import { parseConfigText } from "../src/config/load.ts";
import { Secret } from "../src/core/secret.ts";
import { CallWindow } from "../src/observability/call_window.ts";
import { createLogger } from "../src/observability/logger.ts";
import { RecentEvents } from "../src/observability/recent_events.ts";
import { compilePolicies } from "../src/policy/server_policy.ts";
import { openKvStore } from "../src/store/kv.ts";
import { overviewPage } from "../src/web/admin/overview_page.ts";
import { testClock } from "../tests/fixtures/clock.ts";
import { DENO_DIR_YAML } from "../tests/fixtures/deno_dir.ts";

const SERVERS = 50;
const SESSIONS = 1_000;
const ROUNDS = Number(Deno.args[0] ?? 200);
const MINUTE = 60_000;

const servers = Array.from(
  { length: SERVERS },
  (_, i) =>
    `  server-${i}:\n    transport: stdio\n    command: deno\n    env: { ${DENO_DIR_YAML} }\n    public: true`,
).join("\n");
const config = parseConfigText(`servers:\n${servers}\n`, () => undefined);
const clock = testClock();
clock.freeze();
const now = clock.now();
const calls = new CallWindow();
for (let s = 0; s < SERVERS; s++) {
  for (let m = 0; m < 60; m++) {
    for (let c = 0; c < 20; c++) {
      calls.record(
        `server-${s}`,
        2 + ((c * 37 + m) % 400),
        c === 7 ? "error" : "ok",
        now - m * MINUTE,
      );
    }
  }
}
const sessionList = Array.from({ length: SESSIONS }, (_, i) => ({
  id: `s${i}`,
  server: { name: `server-${i % SERVERS}` },
  principal: { id: `u${i}`, email: `person${i}@example.com`, groups: [] },
  protocolVersion: "2025-11-25",
  activity: { openedAt: now - i * 1000, last: now - i },
}));
const registry = {
  countByServer() {
    const counts = new Map<string, number>();
    for (const s of sessionList) counts.set(s.server.name, (counts.get(s.server.name) ?? 0) + 1);
    return counts;
  },
  list: () => sessionList.values(),
};
const store = await openKvStore(":memory:");
const sources = consoleSources({
  config,
  admin: { emails: ["ops@example.com"], groups: [], path: "/admin", idleTimeoutMs: MINUTE },
  master: new Secret("bench-secret-0123456789-abcdefghijklmnop"),
  store,
  clock,
  logger: createLogger("error", () => {}),
  auditLogger: createLogger("error", () => {}),
  sessions: registry as never,
  processes: { readings: () => [] } as never,
  calls,
  events: new RecentEvents(),
  policies: compilePolicies(config.servers.values()),
  startedAt: now - 3_600_000,
  replica: "bench",
  oauth: {} as never,
});
const ctx = { root: "/admin", csrf: "x".repeat(43), admin: "ops@example.com", now };

let bytes = 0;
for (let i = 0; i < 20; i++) bytes = (await (await overviewPage(ctx, sources)).text()).length;
const start = performance.now();
for (let i = 0; i < ROUNDS; i++) await (await overviewPage(ctx, sources)).text();
const ms = (performance.now() - start) / ROUNDS;
console.log(
  `overview, ${SERVERS} servers, ${SESSIONS} sessions, an hour of calls each: ` +
    `${ms.toFixed(2)} ms a render (${ROUNDS} renders), ${(bytes / 1024).toFixed(0)} KiB of HTML`,
);
store.close();
