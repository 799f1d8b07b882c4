/**
 * Showing what others wrote: tool names, descriptions and schemas from backends, client names
 * and redirect URIs from registrations, addresses and groups from the identity provider, audit
 * arguments. hono/html escapes it; here it is also made visible (control and bidirectional
 * characters shown as their code points, so a name cannot reorder the line it sits in), isolated
 * (`<bdi>`), and folded: a long value shows its start, and the rest, up to a bound, on request.
 */
import { html } from "hono/html";
import { type Html, utcMinute } from "../layout.ts";
import { visible } from "../visible_text.ts";

export { visible };

/** The most a folded value shows when opened: past it, the page says how much it left out. */
const MOST_SHOWN = 4_000;

/**
 * A value as a page shows it: visible, isolated, and past `short` characters folded into a
 * `<details>` that holds up to MOST_SHOWN.
 */
export function shown(value: unknown, short = 120): Html {
  const text = visible(typeof value === "string" ? value : String(value ?? ""));
  if (text.length <= short) return html`<bdi>${text}</bdi>`;
  const rest = text.length - MOST_SHOWN;
  return html`<details class="fold"><summary><bdi>${text.slice(0, short)}</bdi>… <span
        class="muted">(${text.length.toLocaleString("en")} characters)</span></summary><bdi
      class="long">${text.slice(0, MOST_SHOWN)}</bdi>${
    rest > 0
      ? html`<span class="muted"> … ${rest.toLocaleString("en")} more characters not shown</span>`
      : ""
  }</details>`;
}

/** A JSON value pretty-printed, visible and folded (definitions, schemas, arguments). */
export function shownJson(value: unknown, short = 160): Html {
  if (value === undefined) return html`<span class="muted">not kept</span>`;
  let text: string;
  try {
    text = JSON.stringify(value, null, 2) ?? "";
  } catch {
    text = "(cannot be shown)";
  }
  const body = visible(text);
  if (body.length <= short) return html`<pre><bdi>${body}</bdi></pre>`;
  const rest = body.length - MOST_SHOWN;
  return html`
    <details class="fold">
      <summary><code><bdi>${body.slice(0, 80).replace(/\s+/g, " ")}</bdi></code>… <span
            class="muted">(${body.length.toLocaleString("en")} characters)</span></summary>
      <pre><bdi>${body
        .slice(0, MOST_SHOWN)}</bdi>${rest > 0
        ? html`<span class="muted"> … ${rest.toLocaleString("en")} more characters not shown</span>`
        : ""}</pre>
    </details>
  `;
}

export function minuteText(ms: number | undefined): string {
  return ms === undefined ? "—" : utcMinute(ms);
}

export function ago(ms: number | undefined, now: number): string {
  if (ms === undefined) return "never";
  const seconds = Math.max(0, Math.round((now - ms) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86_400)} days ago`;
}
