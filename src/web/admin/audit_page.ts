/**
 * Audit: the latest audit events this replica wrote (calls, tool changes, admins' actions),
 * newest first, filtered by person, server, kind and outcome, a page at a time. The full trail
 * is the "audit" log lines; this is the window on it the gateway keeps in memory.
 */
import { html } from "hono/html";
import type { EventFilter, RecentEvent } from "../../observability/recent_events.ts";
import type { Html } from "../layout.ts";
import { type ConsoleContext, consolePage } from "./frame.ts";
import type { ConsoleSources } from "./sources.ts";
import { minuteText, shown, shownJson } from "./text.ts";

export const AUDIT_PAGE = 50;
const KINDS = ["call", "tool_change", "admin"];
const OUTCOMES = [
  "ok",
  "tool_error",
  "error",
  "timeout",
  "cancelled",
  "session_ended",
  "refused",
  "hold",
  "allow",
  "refuse",
  "done",
];

export function auditFilter(url: URL): { filter: EventFilter; page: number } {
  const pick = (name: string) => {
    const value = url.searchParams.get(name)?.trim();
    return value && value.length <= 320 ? value : undefined;
  };
  const page = Math.min(Math.max(0, Number(url.searchParams.get("page")) || 0), 10_000);
  return {
    filter: {
      person: pick("person"),
      server: pick("server"),
      kind: pick("kind"),
      outcome: pick("outcome"),
    },
    page: Math.floor(page),
  };
}

function select(name: string, label: string, options: string[], value: string | undefined): Html {
  return html`<div><label for="f-${name}">${label}</label><select id="f-${name}" name="${name}">
    <option value="">any</option>${
    options.map((option) =>
      html`<option${
        option === value
          ? html`
            selected
          `
          : ""
      }>${option}</option>`
    )
  }</select></div>`;
}

function filterForm(ctx: ConsoleContext, filter: EventFilter, servers: string[]): Html {
  return html`<form class="filters" method="get" action="${ctx.root}/audit" role="search">
    <div><label for="f-person">Person</label><input id="f-person" name="person" type="text"
      value="${filter.person ?? ""}" size="24" maxlength="320"></div>
    ${select("server", "Server", servers, filter.server)}
    ${select("kind", "Kind", KINDS, filter.kind)}
    ${select("outcome", "Outcome", OUTCOMES, filter.outcome)}
    <button type="submit">Filter</button>
  </form>`;
}

export function eventRow(ctx: ConsoleContext, event: RecentEvent): Html {
  const person = event.person
    ? html`<a href="${ctx.root}/people?email=${encodeURIComponent(event.person)}">${
      shown(event.person, 60)
    }</a>`
    : "—";
  const server = event.server
    ? html`<a href="${ctx.root}/audit?server=${encodeURIComponent(event.server)}">${
      shown(event.server, 60)
    }</a>`
    : "—";
  return html`
    <tr>
      <td class="nowrap">${minuteText(event.at)}</td>
      <td class="nowrap">${event.kind}</td>
      <td class="nowrap">${person}</td>
      <td class="nowrap">${server}</td>
      <td>${shown(event.what, 100)}</td>
      <td>${event.outcome}</td>
      <td>${event.detail ? shownJson(event.detail, 100) : ""}</td>
    </tr>
  `;
}

/** `live`: the newest event's sequence number, where the live stream takes over. */
export function eventsTable(ctx: ConsoleContext, events: RecentEvent[], live?: number): Html {
  return html`
    <table>
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">Kind</th>
          <th
            scope="col">Person</th>
          <th scope="col">Server</th>
          <th scope="col">What</th>
          <th
            scope="col">Outcome</th>
          <th scope="col">Detail</th>
        </tr>
      </thead>
      <tbody${live === undefined ? "" : html`
        data-live="events" data-since="${live}"
      `}>${events.map((event) => eventRow(ctx, event))}</tbody></table>
  `;
}

function query(filter: EventFilter, page: number): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(filter)) if (value) params.set(key, value);
  params.set("page", String(page));
  return params.toString();
}

export async function auditPage(
  ctx: ConsoleContext,
  sources: ConsoleSources,
  filter: EventFilter,
  page: number,
): Promise<Response> {
  const { events, more } = sources.events.query(filter, page, AUDIT_PAGE);
  const unfiltered = !filter.person && !filter.server && !filter.kind && !filter.outcome &&
    page === 0;
  return await consolePage(
    ctx,
    "audit",
    "Audit",
    html`<section class="card">
      <h1>Audit events</h1>
      <p class="muted">The latest ${sources.events.capacity.toLocaleString("en")} events this
        replica wrote, newest first${unfiltered ? "; new ones appear while the page is open" : ""}.
        The full trail is the gateway's "audit" log lines.</p>
      ${filterForm(ctx, filter, sources.servers().map((row) => row.name))}
      ${
      events.length || unfiltered
        ? eventsTable(ctx, events, unfiltered ? sources.events.latestSeq : undefined)
        : html`<p>No event matches.</p>`
    }
      <nav class="pager" aria-label="Audit pages">${
      page > 0 ? html`<a href="${ctx.root}/audit?${query(filter, page - 1)}">Newer</a>` : ""
    }${more ? html`<a href="${ctx.root}/audit?${query(filter, page + 1)}">Older</a>` : ""}</nav>
    </section>`,
    unfiltered,
  );
}
