/**
 * Whether traces reach their OTLP endpoint. Deno exports spans itself (OTEL_DENO=true) and drops
 * them without a word when the endpoint cannot be reached, so a collector that is down, or an
 * endpoint mistyped, would show only as traces that never arrive. This checks the endpoint every
 * `everyMs` and says so in the log: once when it cannot be reached, again every `remindMs` while
 * that lasts, and once when it is reached again.
 */
import type { Clock, Timer } from "../core/clock.ts";
import type { Logger } from "./logger.ts";

const EVERY_MS = 30_000;
const REMIND_MS = 5 * 60_000;

export interface ExportWatchOptions {
  /** Where Deno sends spans, as the log shows it. */
  endpoint: string;
  /** Tries the endpoint: undefined when it was reached, else why it was not. */
  probe(): Promise<string | undefined>;
  clock: Clock;
  logger: Logger;
  everyMs?: number;
  remindMs?: number;
}

export interface ExportWatch {
  /** One check now (the interval runs them too); resolves when it is done. */
  check(): Promise<void>;
  stop(): void;
}

/** The OTLP/HTTP traces endpoint Deno exports to, by the standard variables. */
export function otlpTracesEndpoint(env: (name: string) => string | undefined): string {
  const traces = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  if (traces) return traces;
  const base = env("OTEL_EXPORTER_OTLP_ENDPOINT") || "http://localhost:4318";
  return `${base.replace(/\/+$/, "")}/v1/traces`;
}

export function watchTraceExport(options: ExportWatchOptions): ExportWatch {
  const { endpoint, probe, clock, logger } = options;
  const remindMs = options.remindMs ?? REMIND_MS;
  let downSince: number | undefined;
  let saidAt = 0;
  let failedChecks = 0;
  let running: Promise<void> | undefined;
  let timer: Timer | undefined;

  const once = async () => {
    const why = await probe().catch((error) => String(error?.message ?? error));
    const now = clock.now();
    if (why === undefined) {
      if (downSince !== undefined) {
        logger.info("traces reach the OTLP endpoint again", {
          endpoint,
          unreachableForMs: now - downSince,
        });
      }
      downSince = undefined;
      failedChecks = 0;
      return;
    }
    failedChecks++;
    if (downSince === undefined) {
      downSince = saidAt = now;
      logger.warn("traces cannot reach the OTLP endpoint: spans are dropped until it answers", {
        endpoint,
        error: why,
        hint:
          "start the collector there, or set OTEL_EXPORTER_OTLP_ENDPOINT to where it listens (docs/observability.md)",
      });
    } else if (now - saidAt >= remindMs) {
      saidAt = now;
      logger.warn("traces still cannot reach the OTLP endpoint", {
        endpoint,
        error: why,
        failedChecks,
        unreachableForMs: now - downSince,
      });
    }
  };
  const check = () => running ??= once().finally(() => running = undefined);
  timer = clock.setInterval(() => void check(), options.everyMs ?? EVERY_MS, { unref: true });
  return {
    check,
    stop() {
      timer?.clear();
      timer = undefined;
    },
  };
}
