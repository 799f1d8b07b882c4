/**
 * What the gateway's metrics read when scraped (beside the counters updated as things happen):
 * open sessions, backend processes, shared processes, aggregate cache lookups. Wired once by
 * app.ts, the composition root, for the gateway's life.
 */
import type { ServerName } from "./core/ids.ts";
import type { DiscoveryCache } from "./mcp/aggregate/cache.ts";
import type { ProcessPool } from "./mcp/backends/process_pool.ts";
import { liveChildren } from "./mcp/backends/spawner.ts";
import type { SessionRegistry } from "./mcp/sessions/sessions.ts";
import type { GatewayMetrics } from "./observability/metrics.ts";
import type { StorageMonitor } from "./store/monitored.ts";

/** What is read when scraped: open sessions, backend processes, aggregate cache lookups. */
export function addReadings(
  metrics: GatewayMetrics,
  sessions: SessionRegistry,
  caches: Map<ServerName, DiscoveryCache>,
  processes: ProcessPool,
): void {
  metrics.registry.reading(
    "gatehouse_sessions",
    "Open client sessions, by server.",
    "gauge",
    () => [...sessions.countByServer()].map(([server, count]) => [{ server }, count]),
  );
  metrics.registry.reading(
    "gatehouse_backend_processes",
    "Backend processes (stdio servers) running.",
    "gauge",
    () => [[{}, liveChildren()]],
  );
  addProcessReadings(metrics, processes);
  metrics.registry.reading(
    "gatehouse_aggregate_cache_lookups_total",
    "Aggregate discovery cache lookups, by aggregate and result.",
    "counter",
    () =>
      [...caches].flatMap(([aggregate, cache]) => [
        [{ aggregate, result: "hit" }, cache.stats.hits],
        [{ aggregate, result: "miss" }, cache.stats.misses],
      ]),
  );
}

/** The shared stdio processes (`share:`): how many, how many sessions on them, restarts. */
function addProcessReadings(metrics: GatewayMetrics, processes: ProcessPool): void {
  metrics.registry.reading(
    "gatehouse_shared_processes",
    "Shared stdio processes (share: person or all) running, by server.",
    "gauge",
    () => processes.readings().map(({ server, processes }) => [{ server }, processes]),
  );
  metrics.registry.reading(
    "gatehouse_shared_process_sessions",
    "Sessions on shared stdio processes, by server (divide by gatehouse_shared_processes for sessions per process).",
    "gauge",
    () => processes.readings().map(({ server, sessions }) => [{ server }, sessions]),
  );
  metrics.registry.reading(
    "gatehouse_shared_process_sessions_max",
    "Sessions on the busiest shared stdio process, by server.",
    "gauge",
    () => processes.readings().map(({ server, busiest }) => [{ server }, busiest]),
  );
  metrics.registry.reading(
    "gatehouse_shared_process_restarts_total",
    "Shared stdio processes started again after an earlier one of the same server and person (or pool) had stopped, by server.",
    "counter",
    () => [...processes.restarts()].map(([server, count]) => [{ server }, count]),
  );
  metrics.registry.reading(
    "gatehouse_shared_process_crashes_total",
    "Shared stdio processes that ended on their own (crashed or exited) rather than being stopped, by server.",
    "counter",
    () => [...processes.crashes()].map(([server, count]) => [{ server }, count]),
  );
  metrics.registry.reading(
    "gatehouse_shared_process_dropped_total",
    "Notices (log lines and others) of processes shared by everyone dropped because they named no call the gateway could tie to one person, by server.",
    "counter",
    () => [...processes.dropped()].map(([server, count]) => [{ server }, count]),
  );
}

/** The storage: whether it answers, and per operation its calls, failures and time taken. */
export function addStorageReadings(metrics: GatewayMetrics, monitor: StorageMonitor): void {
  metrics.registry.reading(
    "gatehouse_storage_up",
    "Whether the storage answers: 1, or 0 from a call that failed to reach it until one succeeds.",
    "gauge",
    () => [[{}, monitor.state === "up" ? 1 : 0]],
  );
  const each =
    (pick: (stats: { calls: number; errors: number; seconds: number }) => number) => () =>
      [...monitor.stats].map(([operation, stats]) =>
        [{ operation }, pick(stats)] as [
          Record<string, string>,
          number,
        ]
      );
  metrics.registry.reading(
    "gatehouse_storage_operations_total",
    "Storage operations, by operation.",
    "counter",
    each((stats) => stats.calls),
  );
  metrics.registry.reading(
    "gatehouse_storage_errors_total",
    "Storage operations that failed, by operation.",
    "counter",
    each((stats) => stats.errors),
  );
  metrics.registry.reading(
    "gatehouse_storage_seconds_total",
    "Time spent in storage operations, by operation (divide by gatehouse_storage_operations_total for the mean latency).",
    "counter",
    each((stats) => stats.seconds),
  );
}
