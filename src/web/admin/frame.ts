/**
 * The console's frame: the shared layout, wide, with the console's navigation, its stylesheet
 * and its one script (live updates; every page works without it).
 */
import { html } from "hono/html";
import { type Html, type Notice, noticeBlock, pageResponse } from "../layout.ts";

export interface ConsoleContext {
  /** The console's path on this origin ("/admin", or "/gw/admin" under a base path). */
  root: string;
  /** The admin's CSRF token for this console session. */
  csrf: string;
  /** Who is signed in, as the header shows them. */
  admin: string;
  now: number;
  notice?: Notice;
}

export type PageName = "overview" | "people" | "tools" | "audit";

const PAGES: [PageName, string, string][] = [
  ["overview", "Overview", ""],
  ["people", "People", "/people"],
  ["tools", "Tools", "/tools"],
  ["audit", "Audit", "/audit"],
];

const STYLE = `
nav.console { background: var(--card); border-bottom: 1px solid var(--line); padding: 0 24px;
  display: flex; gap: 4px; flex-wrap: wrap; }
nav.console a { padding: 10px 14px; text-decoration: none; color: var(--fg);
  border-bottom: 3px solid transparent; }
nav.console form.signout { margin-left: auto; align-self: center; }
nav.console form.signout button { padding: 4px 12px; font-size: .9rem; }
nav.console a[aria-current=page] { border-bottom-color: var(--accent); font-weight: 650; }
table { border-collapse: collapse; width: 100%; font-size: .93rem; }
th, td { text-align: left; padding: 7px 10px; border-bottom: 1px solid var(--line);
  vertical-align: top; }
td { overflow-wrap: break-word; }
td bdi, td code { overflow-wrap: anywhere; }
td.nowrap { white-space: nowrap; }
td.nowrap bdi { overflow-wrap: normal; }
td.state-cell { min-width: 10em; }
td form button { white-space: nowrap; }
thead th { font-weight: 650; color: var(--muted); font-size: .85rem; white-space: nowrap; }
tbody th { white-space: nowrap; }
td.num { font-variant-numeric: tabular-nums; }
.card + .card { margin-top: 20px; }
.card { overflow-x: auto; }
.card { padding: 20px 24px; }
.facts-row { display: flex; flex-wrap: wrap; gap: 8px 28px; margin: 0 0 4px; }
.facts-row div { min-width: 120px; }
.facts-row dt { font-size: .8rem; color: var(--muted); }
.facts-row dd { margin: 0; font-weight: 600; font-size: 1.05rem; }
.state { font-weight: 650; white-space: nowrap; }
.state.up { color: var(--ok); } .state.failing { color: var(--danger); }
.state.idle { color: var(--muted); }
svg .grid { stroke: var(--line); stroke-width: 1; }
svg .p50 { stroke: var(--accent); stroke-width: 2; fill: none; }
svg .p99 { stroke: var(--danger); stroke-width: 1.5; fill: none; stroke-dasharray: 4 3; }
svg circle.p50 { fill: var(--accent); stroke: none; }
svg circle.p99 { fill: var(--card); stroke-dasharray: none; }
svg .axis { fill: var(--muted); font-size: 9px; }
figure.chart { margin: 0; }
pre { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; font: .85em ui-monospace,
  SFMono-Regular, Menlo, monospace; max-height: 24em; overflow: auto; }
details.fold summary { cursor: pointer; }
bdi.long { white-space: pre-wrap; display: block; max-height: 24em; overflow: auto; }
form.filters { display: flex; flex-wrap: wrap; gap: 12px; align-items: end; margin: 0 0 16px; }
form.filters label { margin: 0 0 4px; font-size: .85rem; }
form.filters input, form.filters select { font: inherit; padding: 6px 8px; border-radius: 6px;
  border: 1px solid var(--muted); background: var(--bg); color: var(--fg); width: auto; }
form.inline button, td form button { padding: 4px 12px; }
.diff td:first-child { width: 8em; }
.legend { font-size: .85rem; color: var(--muted); }
.pager { display: flex; gap: 16px; margin-top: 12px; }
h2 { margin: 0 0 10px; }
`;

function nav(ctx: ConsoleContext, current: PageName): Html {
  const links = PAGES.map(([name, label, path]) =>
    html`
      <a href="${ctx.root}${path}" ${name === current
        ? html`
          aria-current="page"
        `
        : ""}>${label}</a>
    `
  );
  // After the links, so the keyboard reaches the pages first.
  return html`<nav class="console" aria-label="Console">${links}<form method="post"
      action="${ctx.root}/logout" class="signout">${csrfField(ctx)}<button
        type="submit">Sign out</button></form></nav>`;
}

export function consolePage(
  ctx: ConsoleContext,
  current: PageName,
  title: string,
  body: Html,
  live = false,
): Promise<Response> {
  return pageResponse(
    200,
    {
      title: `${title} · Console`,
      signedInAs: ctx.admin,
      wide: true,
      nav: nav(ctx, current),
      style: STYLE,
      script: live ? `${ctx.root}/live.js` : undefined,
    },
    html`${noticeBlock(ctx.notice)}${body}`,
  );
}

/** The hidden field every action form carries. */
export function csrfField(ctx: ConsoleContext): Html {
  return html`<input type="hidden" name="csrf" value="${ctx.csrf}">`;
}
