/**
 * The approval pages: one held call (`/approvals/{id}`: who asks, through which client, which
 * server and tool, what the tool says it does, the arguments, and Approve / Deny for whoever may
 * decide) and the list of what waits (`/approvals`). Server-rendered and escaped: arguments are
 * data a stranger may have written, shown as text, never run; a long value is folded in a
 * `<details>`, which needs no script.
 */
import { html } from "hono/html";
import type { ApprovalRecord } from "../../mcp/approvals/approval_records.ts";
import { chosen, type Html, type Notice, noticeBlock, pageResponse, utcMinute } from "../layout.ts";
import { visible } from "../visible_text.ts";

export interface ApprovalPageContext {
  person: string;
  basePath: string;
  csrf: string;
  now: number;
  notice?: Notice;
  /** Registered client names (client_name) by client id, shown beside the id. */
  clientNames?: ReadonlyMap<string, string>;
}

/**
 * The client a call came through: its registered name (which the client chose: isolated and
 * with control characters replaced, as the consent page shows it) beside its id.
 */
function clientCell(
  written: ApprovalRecord,
  record: ApprovalRecord,
  ctx: ApprovalPageContext,
): Html {
  if (!record.client) return html`not known`;
  const name = written.client === undefined ? undefined : ctx.clientNames?.get(written.client);
  return name === undefined
    ? html`<code>${record.client}</code>`
    : html`${chosen(name)} (<code>${record.client}</code>)`;
}

/** A value longer than this is folded: its first line shows, the rest on request. */
const FOLD_CHARS = 160;

const STYLE = html`<style>
.args { width: 100%; border-collapse: collapse; margin: 6px 0 16px; }
.args th, .args td { text-align: left; vertical-align: top; padding: 6px 8px;
  border-top: 1px solid var(--line); }
.args th { white-space: nowrap; font-weight: 600; }
.args pre { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere;
  font: .9em ui-monospace, SFMono-Regular, Menlo, monospace; max-height: 24em; overflow: auto; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 14px; margin: 0 0 16px; }
dl.facts dt { font-weight: 600; } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
button.danger { color: var(--danger); border-color: var(--danger); }
</style>`;

/**
 * The record with what others wrote (the tool's name and description, the client, the caller's
 * address, the arguments' keys and values) made visible: no character hides or reorders text.
 */
function readable(record: ApprovalRecord): ApprovalRecord {
  const email = record.person.email;
  return {
    ...record,
    tool: visible(record.tool),
    ...(record.description !== undefined && { description: visible(record.description) }),
    ...(record.client !== undefined && { client: visible(record.client) }),
    person: { ...record.person, ...(email !== undefined && { email: visible(email) }) },
    shown: visibleJson(record.shown, 0),
  };
}

function visibleJson(value: unknown, depth: number): unknown {
  if (typeof value === "string") return visible(value);
  if (value === null || typeof value !== "object" || depth > 16) return value;
  if (Array.isArray(value)) return value.map((item) => visibleJson(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    let shown = visible(key);
    // A key written as another's visible form stays apart from it.
    for (let n = 2; Object.hasOwn(out, shown); n++) shown = `${visible(key)} (${n})`;
    out[shown] = visibleJson(item, depth + 1);
  }
  return out;
}

function left(record: ApprovalRecord, now: number): string {
  const minutes = Math.max(0, Math.ceil((record.expiresAt - now) / 60_000));
  return minutes >= 120 ? `${Math.round(minutes / 60)} hours` : `${minutes} min`;
}

const STATUS: Record<ApprovalRecord["status"], [string, string]> = {
  pending: ["Waiting for a decision", "warn"],
  approved: ["Approved: runs when the client sends it", "ok"],
  denied: ["Denied: it did not run", "none"],
  expired: ["Expired: it did not run", "none"],
  used: ["Approved and run", "ok"],
  ended: ["Ended without running", "none"],
};

function badge(record: ApprovalRecord): Html {
  const [text, kind] = STATUS[record.status];
  return html`<span class="badge ${kind}">${text}</span>`;
}

function approver(record: ApprovalRecord): string {
  if (record.by === "caller") return "the caller";
  const names = [...record.by.groups.map((g) => `group ${g}`), ...record.by.emails];
  return `${names.join(", ")} (not the caller)`;
}

function valueCell(value: unknown): Html {
  const text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  if (text.length <= FOLD_CHARS && !text.includes("\n")) return html`<pre>${text}</pre>`;
  const first = text.split("\n", 1)[0].slice(0, 80);
  return html`
    <details>
      <summary><code>${first}…</code> (${text.length} characters)</summary>
      <pre>${text}</pre>
    </details>
  `;
}

function argumentsTable(shown: unknown): Html {
  if (shown === null || typeof shown !== "object" || Array.isArray(shown)) {
    return html`
      <table class="args">
        <tr>
          <td>${valueCell(shown)}</td>
        </tr>
      </table>
    `;
  }
  const entries = Object.entries(shown as Record<string, unknown>);
  if (entries.length === 0) return html`<p class="muted">No arguments.</p>`;
  return html`<table class="args">${
    entries.map(([key, value]) =>
      html`
        <tr>
          <th scope="row"><code>${key}</code></th>
          <td>${valueCell(value)}</td>
        </tr>
      `
    )
  }</table>`;
}

export function approvalPage(
  written: ApprovalRecord,
  mayDecide: { ok: true } | { ok: false; why: string },
  ctx: ApprovalPageContext,
): Promise<Response> {
  const record = readable(written);
  const action = `${ctx.basePath}/approvals/${record.id}`;
  return pageResponse(
    200,
    {
      title: `Approve ${record.tool}?`,
      signedInAs: ctx.person,
      account: { basePath: ctx.basePath, csrf: ctx.csrf },
    },
    html`${STYLE}
    <div class="card">
      <div class="service-head"><h1>Approve a call of <code>${record.tool}</code>?</h1>${
      badge(record)
    }</div>
      ${noticeBlock(ctx.notice)}
      <dl class="facts">
        <dt>Asked by</dt><dd>${record.person.email ?? record.person.id}</dd>
        <dt>Client</dt><dd>${clientCell(written, record, ctx)}</dd>
        <dt>Server</dt><dd><code>${record.server}</code>${
      record.member
        ? html`
          (member <code>${record.member}</code>)
        `
        : ""
    }</dd>
        <dt>Tool</dt><dd><code>${record.tool}</code></dd>
        <dt>Decided by</dt><dd>${approver(record)}</dd>
        <dt>Asked at</dt><dd>${utcMinute(record.requestedAt)}${
      record.status === "pending"
        ? html`
          · expires in ${left(record, ctx.now)}
        `
        : ""
    }</dd>
        ${
      record.decidedBy
        ? html`
          <dt>Decision</dt>
          <dd>${record.decidedBy}</dd>
        `
        : ""
    }
      </dl>
      <h2>What the tool says it does</h2>
      <p class="small">${
      record.description ?? html`<span class="muted">The server gives no description.</span>`
    }</p>
      <h2>Arguments</h2>
      <p class="muted small">Exactly these run if you approve; any other arguments need a new approval.</p>
      ${argumentsTable(record.shown)}
      ${
      record.status !== "pending" ? "" : mayDecide.ok
        ? html`
          <form method="post" action="${action}" class="actions">
            <input type="hidden" name="csrf" value="${ctx.csrf}">
            <button type="submit" name="decision" value="approve" class="primary">Approve</button>
            <button type="submit" name="decision" value="deny" class="danger">Deny</button>
          </form>
        `
        : html`<p class="notice" role="status">${mayDecide.why}</p>`
    }
    </div>`,
  );
}

export function approvalListPage(
  mine: ApprovalRecord[],
  forMe: ApprovalRecord[],
  ctx: ApprovalPageContext,
): Promise<Response> {
  const row = (written: ApprovalRecord, record = readable(written)) =>
    html`
      <section class="service">
        <div
          class="service-head"><h2><a href="${ctx.basePath}/approvals/${record.id}"><code>${record
            .tool}</code> on <code>${record.server}</code></a></h2>${badge(record)}</div>
        <p class="muted small">Asked by ${record.person.email ?? record.person.id}${record.client
          ? html`
            through ${clientCell(written, record, ctx)}
          `
          : ""} at ${utcMinute(record.requestedAt)}</p>
      </section>
    `;
  return pageResponse(
    200,
    {
      title: "Approvals",
      signedInAs: ctx.person,
      account: { basePath: ctx.basePath, csrf: ctx.csrf },
    },
    html`<div class="card">
      <h1>Calls waiting for approval</h1>
      ${noticeBlock(ctx.notice)}
      <h2>For you to decide</h2>
      ${forMe.length ? forMe.map((r) => row(r)) : html`<p class="muted">Nothing waits for you.</p>`}
      <h2 style="margin-top:18px">Your own calls</h2>
      ${
      mine.length ? mine.map((r) => row(r)) : html`<p class="muted">None of your calls is held.</p>`
    }
    </div>`,
  );
}
