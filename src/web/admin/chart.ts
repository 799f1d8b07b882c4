/**
 * The overview's latency picture: p50 and p99 of each minute of the last hour as an inline SVG
 * drawn on the server (no script, no external asset). Lines for the two quantiles, a dashed one
 * for p99 so it reads without colour, a log-scaled axis from 1 ms to 60 s, and a text summary
 * beside it for screen readers and for people who would rather read.
 */
import { html, raw } from "hono/html";
import type { MinuteReading } from "../../observability/call_window.ts";
import type { Html } from "../layout.ts";

const WIDTH = 220;
const HEIGHT = 84;
const LOW = Math.log10(0.001);
const HIGH = Math.log10(60);

function y(seconds: number): number {
  const clamped = Math.min(Math.max(seconds, 0.001), 60);
  return HEIGHT - ((Math.log10(clamped) - LOW) / (HIGH - LOW)) * (HEIGHT - 4) - 2;
}

/** A marker on each minute with calls but no neighbour: a lone minute has no line to show it. */
function dots(
  series: MinuteReading[],
  pick: (m: MinuteReading) => number | undefined,
  kind: string,
): string {
  const step = WIDTH / Math.max(1, series.length - 1);
  const has = (i: number) => {
    const value = series[i] && pick(series[i]);
    return value !== undefined && Number.isFinite(value);
  };
  return series.map((minute, i) => {
    const value = pick(minute);
    if (value === undefined || !has(i) || has(i - 1) || has(i + 1)) return "";
    return `<circle cx="${(i * step).toFixed(1)}" cy="${
      y(value).toFixed(1)
    }" r="2.2" class="${kind}"/>`;
  }).join("");
}

function path(series: MinuteReading[], pick: (m: MinuteReading) => number | undefined): string {
  const step = WIDTH / Math.max(1, series.length - 1);
  let d = "";
  let open = false;
  series.forEach((minute, i) => {
    const value = pick(minute);
    if (value === undefined || !Number.isFinite(value)) {
      open = false;
      return;
    }
    d += `${open ? "L" : "M"}${(i * step).toFixed(1)} ${y(value).toFixed(1)}`;
    open = true;
  });
  return d;
}

export function seconds(value: number | undefined): string {
  if (value === undefined) return "—";
  if (!Number.isFinite(value)) return "> 60 s";
  return value < 1 ? `${Math.round(value * 1000)} ms` : `${value} s`;
}

/** The last hour's p50 and p99 of one server; `label` names it for assistive technology. */
export function latencyChart(series: MinuteReading[], label: string): Html {
  const active = series.filter((m) => m.calls > 0);
  if (active.length === 0) {
    return html`<span class="muted small">no calls in the last hour</span>`;
  }
  const worst50 = Math.max(...active.map((m) => m.p50 ?? 0));
  const worst99 = Math.max(...active.map((m) => m.p99 ?? 0));
  const short = `p50 ≤ ${seconds(worst50)} · p99 ≤ ${seconds(worst99)}`;
  const summary = `p50 up to ${seconds(worst50)}, p99 up to ${seconds(worst99)} over the last hour`;
  // Grid lines at 10 ms, 100 ms, 1 s and 10 s, labelled at the right.
  const grid = GRID.map(([s, text]) => {
    const at = y(s).toFixed(1);
    return `<line x1="0" x2="${WIDTH}" y1="${at}" y2="${at}" class="grid"/>` +
      `<text x="${WIDTH + 4}" y="${(y(s) + 3).toFixed(1)}" class="axis">${text}</text>`;
  }).join("");
  const lines = `<path d="${path(series, (m) => m.p99)}" class="p99"/>` +
    `<path d="${path(series, (m) => m.p50)}" class="p50"/>`;
  const marks = dots(series, (m) => m.p99, "p99") + dots(series, (m) => m.p50, "p50");
  return html`
    <figure class="chart">
      <svg viewBox="0 0 ${WIDTH + AXIS} ${HEIGHT}" width="${WIDTH + AXIS}" height="${HEIGHT}"
        role="img" aria-label="${label}: ${summary}">${raw(grid + lines + marks)}</svg>
      <figcaption class="small muted" aria-hidden="true">${short}</figcaption>
    </figure>
  `;
}

/** Room at the right for the grid's labels. */
const AXIS = 38;
const GRID: [number, string][] = [[0.01, "10ms"], [0.1, "100ms"], [1, "1s"], [10, "10s"]];
