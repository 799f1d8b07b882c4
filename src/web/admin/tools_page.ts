/**
 * Tools: per server, the held changes with a field-level diff, each with Approve (pinned to the
 * digest reviewed here, as `gatehouse tools approve --digest`) and Refuse; the approved
 * definitions (how and when); the pinned ones from the configuration.
 */
import { html } from "hono/html";
import type { Html } from "../layout.ts";
import { type ConsoleContext, consolePage, csrfField } from "./frame.ts";
import type { ConsoleSources, PinRow, ToolRow } from "./sources.ts";
import { minuteText, shown, shownJson, visible } from "./text.ts";

/** Approved tools shown per page. */
export const APPROVED_PAGE = 100;
/** Held tools shown at most (a server listing thousands of new tools is said in a sentence). */
const HELD_SHOWN = 200;

/** The top-level fields whose values differ between two definitions. */
export function changedFields(before: unknown, after: unknown): string[] {
  const a = (before && typeof before === "object" ? before : {}) as Record<string, unknown>;
  const b = (after && typeof after === "object" ? after : {}) as Record<string, unknown>;
  const names = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...names].filter((name) => JSON.stringify(a[name]) !== JSON.stringify(b[name])).sort();
}

/** A table with a header row naming `columns`, then `rows` (each a `<tr>`). */
function table(columns: string[], rows: Html[], className?: string): Html {
  const open = className ? html`<table class="${className}">` : html`<table>`;
  return html`
    ${open}
      <thead>
      <tr>${columns.map((column) => html`<th scope="col">${column}</th>`)}</tr>
    </thead>
      <tbody>${rows}</tbody>
    </table>
  `;
}

function diffTable(row: ToolRow): Html {
  const held = row.held!;
  const before = row.approved?.definition as Record<string, unknown> | undefined;
  const after = held.definition as Record<string, unknown> | undefined;
  if (!after) {
    return html`<p class="small muted">The definition seen is too large to keep; its digest is
      <code>${held.digest}</code>.</p>`;
  }
  const fields = changedFields(before, after);
  return table(
    ["Field", "Approved", "Seen (held)"],
    fields.map((field) =>
      html`
        <tr>
          <th scope="row"><code>${shown(field, 40)}</code></th>
          <td>${before && field in before
            ? shownJson(before[field])
            : html`<span class="muted">${row.approved ? "absent" : "never approved"}</span>`}</td>
          <td>${field in after
            ? shownJson(after[field])
            : html`<span class="muted">removed</span>`}</td>
        </tr>
      `
    ),
    "diff",
  );
}

function heldCard(ctx: ConsoleContext, row: ToolRow): Html {
  const held = row.held!;
  const id = `held-${row.server}-${held.digest.slice(0, 12)}`;
  const hidden = html`${csrfField(ctx)}<input type="hidden" name="server" value="${row.server}">
    <input type="hidden" name="tool" value="${row.tool}">
    <input type="hidden" name="digest" value="${held.digest}">`;
  return html`<section class="service" id="${id}" aria-labelledby="${id}-title">
    <div class="service-head"><h3 id="${id}-title" class="small"><code>${row.server}</code> ·
      <code>${shown(row.tool, 80)}</code></h3>
      <span class="badge warn">${
    held.refused ? "Refused" : row.approved ? "Changed" : "New"
  }</span></div>
    <p class="small muted">Seen ${minuteText(held.at)} · digest <code>${
    held.digest.slice(0, 16)
  }…</code>${
    row
        .approved
      ? html`
        · approved <code>${row.approved.digest.slice(0, 16)}…</code> (${row.approved.by})
      `
      : ""
  }${
    held.refused
      ? html`
        · refused by ${shown(held.refused.by, 60)} ${minuteText(held.refused.at)}
      `
      : ""
  }</p>
    <ul class="small">${held.changes.map((change) => html`<li>${shown(change, 200)}</li>`)}</ul>
    ${diffTable(row)}
    <div class="actions tight">
      <form method="post" action="${ctx.root}/tools/approve">${hidden}
        <button class="primary" type="submit"
          aria-label="Approve ${row.server} ${
    visible(row.tool).slice(0, 80)
  } as reviewed">Approve</button></form>
      ${
    held.refused ? "" : html`<form method="post" action="${ctx.root}/tools/refuse">${hidden}
        <button type="submit" aria-label="Refuse ${row.server} ${
      visible(row.tool).slice(0, 80)
    }">Refuse</button></form>`
  }
    </div>
  </section>`;
}

function approvedTable(ctx: ConsoleContext, rows: ToolRow[], page: number): Html {
  const shownRows = rows.slice(page * APPROVED_PAGE, (page + 1) * APPROVED_PAGE);
  if (!rows.length) {
    return html`<p class="muted">No tool approved yet (tools are recorded when a client lists them).</p>`;
  }
  return html`${
    table(
      ["Server", "Tool", "Approved by", "When", "Digest"],
      shownRows.map((row) =>
        html`
          <tr>
            <td>${row.server}</td>
            <td><code>${shown(row.tool, 80)}</code></td>
            <td>${row.approved!.by}</td>
            <td>${minuteText(row.approved!.at)}</td>
            <td><code>${row.approved!.digest.slice(0, 16)}…</code></td>
          </tr>
        `
      ),
    )
  }${pager(ctx, page, rows.length)}`;
}

function pager(ctx: ConsoleContext, page: number, total: number): Html {
  const pages = Math.ceil(total / APPROVED_PAGE);
  if (pages <= 1) return html``;
  return html`
    <nav class="pager"
      aria-label="Approved tools pages">${page > 0
        ? html`<a href="${ctx.root}/tools?page=${page - 1}">Previous</a>`
        : ""}<span class="muted">page ${page + 1} of ${pages}</span>${page + 1 < pages
        ? html`<a href="${ctx.root}/tools?page=${page + 1}">Next</a>`
        : ""}</nav>
  `;
}

function pinsTable(pins: PinRow[]): Html {
  if (!pins.length) {
    return html`<p class="muted">No server pins tools (servers.NAME.tools.pinned).</p>`;
  }
  return table(
    ["Server", "Tool", "Pinned digest"],
    pins.map((pin) =>
      html`
        <tr>
          <td>${pin.server}</td>
          <td><code>${shown(pin.tool, 80)}</code></td>
          <td><code>${pin.digest}</code></td>
        </tr>
      `
    ),
  );
}

export async function toolsPage(
  ctx: ConsoleContext,
  sources: ConsoleSources,
  page: number,
): Promise<Response> {
  const records = await sources.tools();
  const held = records.filter((row) => row.held);
  const approved = records.filter((row) => !row.held && row.approved)
    .sort((a, b) => b.approved!.at - a.approved!.at);
  return await consolePage(
    ctx,
    "tools",
    "Tools",
    html`
      <section class="card" aria-labelledby="held-title">
            <h1 id="held-title">Held tool changes</h1>
            <p class="muted">A held tool is left out of tools/list and its calls are refused until it is
              approved. Approve approves the definition shown here only: if the server changed it again
              since, nothing is approved. Refuse keeps it unserved and marks it reviewed.
              <a href="${ctx.root}/audit?kind=tool_change">Tool change events</a>.</p>
            ${held.length
              ? held.slice(0, HELD_SHOWN).map((row) => heldCard(ctx, row))
              : html`<p>Nothing is held.</p>`}
            ${held.length > HELD_SHOWN
              ? html`<p class="muted">${
                held.length - HELD_SHOWN
              } more held; gatehouse tools list --held shows them all.</p>`
              : ""}
          </section>
      <section class="card" aria-labelledby="approved-title"><h2 id="approved-title">Approved</h2>
            ${approvedTable(ctx, approved, page)}</section>
      <section class="card" aria-labelledby="pins-title"><h2 id="pins-title">Pinned</h2>
            ${pinsTable(sources.pins())}</section>
    `,
  );
}
