/**
 * Overview: the gateway (version, uptime, replicas, certificates) and each server: transport,
 * revision, state with the last error, live sessions, processes, calls and errors a minute, and
 * the last hour's latency as a chart drawn on the server.
 */
import { html } from "hono/html";
import type { MinuteReading } from "../../observability/call_window.ts";
import { latencyChart } from "./chart.ts";
import { type ConsoleContext, consolePage } from "./frame.ts";
import type { ConsoleSources, GatewayFacts, ServerRow } from "./sources.ts";
import { ago, shown } from "./text.ts";
import type { Html } from "../layout.ts";

/** Minutes the per-minute figures average over. */
const RECENT = 5;
/** A server whose last call is older than this (and has no session) is idle. */
const IDLE_MS = 15 * 60_000;

export interface ServerState {
  state: "up" | "failing" | "idle";
  detail: string;
}

export function serverState(
  sources: ConsoleSources,
  row: ServerRow,
  recent: MinuteReading[],
  now: number,
): ServerState {
  const failure = sources.lastFailure(row.name);
  const last = sources.lastCall(row.name);
  const errors = recent.reduce((sum, m) => sum + m.errors, 0);
  if (failure && errors > 0 && now - failure.at < RECENT * 60_000) {
    const code = failure.errorCode === undefined ? "" : ` (${failure.errorCode})`;
    return {
      state: "failing",
      detail: `last failure: ${failure.outcome}${code}, ${ago(failure.at, now)}`,
    };
  }
  if ((last === undefined || now - last > IDLE_MS) && row.sessions === 0) {
    return {
      state: "idle",
      detail: last === undefined ? "no calls yet" : `last call ${ago(last, now)}`,
    };
  }
  return {
    state: "up",
    detail: last === undefined ? "sessions open" : `last call ${ago(last, now)}`,
  };
}

export interface OverviewNumbers {
  sessions: number;
  callsPerMinute: number;
  errorsPerMinute: number;
}

/** Per-minute averages over the last RECENT whole minutes and the current one. */
export function perMinute(series: MinuteReading[]): { calls: number; errors: number } {
  const recent = series.slice(-RECENT);
  const calls = recent.reduce((sum, m) => sum + m.calls, 0);
  const errors = recent.reduce((sum, m) => sum + m.errors, 0);
  const round = (n: number) => Math.round((n / recent.length) * 10) / 10;
  return { calls: round(calls), errors: round(errors) };
}

function uptime(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} days`;
}

function factsBlock(facts: GatewayFacts, total: OverviewNumbers, now: number): Html {
  const item = (label: string, value: unknown, live?: string) =>
    html`
      <div>
        <dt>${label}</dt>
        <dd${live
          ? html`
            data-live="${live}"
          `
          : ""}>${value}</dd></div>
    `;
  return html`
    <section class="card" aria-labelledby="gateway-title">
      <h1 id="gateway-title">Gateway</h1>
      <dl class="facts-row">
          ${item("Version", facts.version)} ${item("Uptime", uptime(now - facts.startedAt))}
          ${item("Replica", shown(facts.replica, 40))} ${item("Replicas seen", facts.replicas)}
          ${item("Live sessions", total.sessions, "total-sessions")}
          ${item("Calls / min", total.callsPerMinute, "total-calls")}
          ${item("Errors / min", total.errorsPerMinute, "total-errors")}
          ${item("TLS", facts.tls)} ${item("Storage", shown(facts.storage, 40))}
        </dl>
    </section>
  `;
}

function serverRow(ctx: ConsoleContext, sources: ConsoleSources, row: ServerRow): Html {
  const series = sources.series(row.name);
  const rate = perMinute(series);
  const state = serverState(sources, row, series.slice(-RECENT), ctx.now);
  const audit = `${ctx.root}/audit?server=${encodeURIComponent(row.name)}`;
  return html`
    <tr id="server-${row.name}">
      <th scope="row"><a href="${audit}" title="Audit events of ${row.name}">${row.name}</a></th>
      <td>${row.transport}${row.members
        ? html`<div class="small muted">${row.members.join(", ")}</div>`
        : ""}${row
          .share
        ? html`<div class="small muted">share: ${row.share}</div>`
        : ""}</td>
      <td>${row.revision === "auto"
        ? html`auto <div class="small muted">not learned yet</div>`
        : row.revision}</td>
      <td
        class="state-cell"><span class="state ${state.state}" data-live="state-${row.name}">${state
          .state}</span>
          <div class="small muted">${state.detail}</div></td>
      <td data-live="sessions-${row.name}">${row.sessions}</td>
      <td>${row.transport === "stdio" ? row.processes : "—"}</td>
      <td data-live="calls-${row.name}">${rate.calls}</td>
      <td data-live="errors-${row.name}">${rate.errors}</td>
      <td>${latencyChart(series, `Latency of ${row.name}`)}</td>
    </tr>
  `;
}

export async function overviewPage(
  ctx: ConsoleContext,
  sources: ConsoleSources,
): Promise<Response> {
  const servers = sources.servers();
  const facts = await sources.facts();
  const total = overviewNumbers(sources, servers);
  return await consolePage(
    ctx,
    "overview",
    "Overview",
    html`
      ${factsBlock(facts, total, ctx.now)}
          <section class="card" aria-labelledby="servers-title">
        <h2 id="servers-title">Servers</h2>
        <p class="legend">Latency: <strong>solid</strong> line p50, <strong>dashed</strong> line p99, each
              minute of the last hour, on a scale from 1 ms to 60 s. Calls and errors are per minute over
              the last ${RECENT} minutes, on this replica.</p>
        <table>
          <thead>
            <tr>
              <th scope="col">Server</th>
              <th scope="col">Transport</th>
              <th
                scope="col">Revision</th>
              <th scope="col">State</th>
              <th scope="col">Sessions</th>
              <th
                scope="col">Processes</th>
              <th scope="col">Calls / min</th>
              <th scope="col">Errors / min</th>
              <th
                scope="col">Latency, last hour</th>
            </tr>
          </thead>
          <tbody>${servers.map((row) => serverRow(ctx, sources, row))}</tbody>
        </table>
      </section>
    `,
    true,
  );
}

/** The figures the live view refreshes. */
export function overviewNumbers(sources: ConsoleSources, servers: ServerRow[]): OverviewNumbers {
  let calls = 0;
  let errors = 0;
  let sessions = 0;
  for (const row of servers) {
    const rate = perMinute(sources.series(row.name));
    calls += rate.calls;
    errors += rate.errors;
    sessions += row.sessions;
  }
  return {
    sessions,
    callsPerMinute: Math.round(calls * 10) / 10,
    errorsPerMinute: Math.round(errors * 10) / 10,
  };
}
