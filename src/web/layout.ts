/**
 * The frame every browser page shares: one stylesheet inline (the binary carries no files),
 * system fonts, readable contrast, visible focus, and a strict content security policy.
 */
import { html, raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import { withoutControls } from "../core/display_text.ts";

export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

/**
 * Text a client or backend chose (a client's name, its client_id URL), as a page shows it:
 * control and bidirectional control characters replaced with U+FFFD (core/display_text.ts), so a
 * U+202E in a client's name cannot reorder the consent page's sentence around it.
 */
export function shownText(text: string): string {
  return withoutControls(text, "\uFFFD");
}

/** `shownText`, isolated from the sentence around it (`<bdi>`): a right-to-left name stays put. */
export function chosen(text: string): Html {
  return html`<bdi>${shownText(text)}</bdi>`;
}

const STYLE = `
:root { color-scheme: light dark; --fg: #1b1f24; --muted: #4a5260; --bg: #f6f7f9; --card: #fff;
  --line: #d6dae0; --accent: #1f5fbf; --accent-fg: #fff; --danger: #a4262c; --ok: #1d6b38; }
@media (prefers-color-scheme: dark) { :root { --fg: #e8eaed; --muted: #b4bac4; --bg: #15181c;
  --card: #1e2227; --line: #3a4049; --accent: #7fb0ff; --accent-fg: #0b1a33; --danger: #ff8a8f;
  --ok: #7bd897; } }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: var(--fg); background: var(--bg); }
header { padding: 14px 24px; border-bottom: 1px solid var(--line); background: var(--card);
  display: flex; justify-content: space-between; align-items: center; }
header .brand { font-weight: 650; letter-spacing: .2px; }
main { max-width: 640px; margin: 40px auto; padding: 0 20px; }
main.wide { max-width: 1280px; margin: 24px auto; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 12px;
  padding: 28px; }
h1 { font-size: 1.45rem; margin: 0 0 12px; }
p { margin: 0 0 14px; }
.muted { color: var(--muted); }
code { font: .92em ui-monospace, SFMono-Regular, Menlo, monospace; overflow-wrap: anywhere; }
ul.facts { padding-left: 20px; margin: 0 0 18px; }
.actions { display: flex; gap: 12px; flex-wrap: wrap; margin-top: 20px; }
button, .button { font: inherit; padding: 10px 18px; border-radius: 8px; cursor: pointer;
  border: 1px solid var(--line); background: var(--card); color: var(--fg);
  text-decoration: none; display: inline-block; }
button.primary { background: var(--accent); color: var(--accent-fg); border-color: var(--accent); }
button:focus-visible, .button:focus-visible, a:focus-visible, input:focus-visible {
  outline: 3px solid var(--accent); outline-offset: 2px; }
.notice { border-left: 4px solid var(--danger); padding: 10px 14px; margin: 0 0 16px;
  background: color-mix(in srgb, var(--danger) 8%, transparent); }
.notice.ok { border-color: var(--ok); background: color-mix(in srgb, var(--ok) 8%, transparent); }
a { color: var(--accent); }
form.inline { display: inline; }
header nav { display: flex; gap: 16px; align-items: baseline; flex-wrap: wrap; }
header nav button { padding: 4px 12px; }
h2 { font-size: 1.12rem; margin: 0; }
.service { border-top: 1px solid var(--line); padding: 22px 0 4px; }
.service:first-of-type { border-top: 0; padding-top: 4px; }
.service-head { display: flex; justify-content: space-between; align-items: baseline; gap: 12px;
  flex-wrap: wrap; margin-bottom: 6px; }
.badge { font-size: .85rem; font-weight: 600; padding: 1px 10px; border-radius: 999px;
  border: 1px solid currentColor; white-space: nowrap; }
.badge.ok { color: var(--ok); }
.badge.warn { color: var(--danger); }
.badge.none { color: var(--muted); }
.small { font-size: .92rem; }
label { display: block; font-weight: 600; margin: 14px 0 6px; }
input[type=password], input[type=text] { font: inherit; width: 100%; padding: 10px 12px;
  border: 1px solid var(--muted); border-radius: 8px; background: var(--bg); color: var(--fg); }
.actions.tight { margin-top: 12px; }
a.button.primary { background: var(--accent); color: var(--accent-fg); border-color: var(--accent); }
`;

/** A sentence at the top of a page saying how the last action went. */
export interface Notice {
  ok: boolean;
  text: string;
}

/** A notice as the pages show it: a status when it went well, an alert when not. */
export function noticeBlock(notice: Notice | undefined): Html {
  if (!notice) return html``;
  return notice.ok
    ? html`<div class="notice ok" role="status">${notice.text}</div>`
    : html`<div class="notice" role="alert">${notice.text}</div>`;
}

export interface AccountNav {
  /** The gateway's base path. */
  basePath: string;
  /** This SSO session's CSRF token: signing out is a POST carrying it. */
  csrf: string;
}

export interface LayoutOptions {
  title: string;
  /** Shown at the right of the header: who is signed in. */
  signedInAs?: string;
  /** With signedInAs: the header's links and its Sign out form. */
  account?: AccountNav;
  /** Extra origins forms on this page may be redirected to (the client's redirect URI). */
  formTargets?: string[];
  /** A page of tables (the operator console): the main column spans the window. */
  wide?: boolean;
  /** Navigation shown under the header (the console's pages). */
  nav?: Html;
  /** More CSS, appended to the shared stylesheet (a constant, never request data). */
  style?: string;
  /** A script of the gateway's own, by path: allowed by the CSP (script-src and connect-src 'self'). */
  script?: string;
}

/** The page's Content-Security-Policy header value. */
export function pageCsp(options: LayoutOptions): string {
  const targets = ["'self'", ...(options.formTargets ?? [])].join(" ");
  const script = options.script ? "; script-src 'self'; connect-src 'self'" : "";
  return `default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action ${targets}; frame-ancestors 'none'; base-uri 'none'${script}`;
}

export function layout(options: LayoutOptions, body: Html): Html {
  return html`
    <!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <link rel="icon" href="data:,">
        <title>${options.title} · Gatehouse</title>
        <style>${raw(STYLE)}${raw(options.style ?? "")}</style>${options.script
          ? html`<script src="${options.script}" defer></script>`
          : ""}
      </head>
      <body>
        <header><span class="brand">Gatehouse</span>${options.signedInAs
          ? html`<nav aria-label="Account"><span class="muted">Signed in as ${options.signedInAs}</span>${
            options.account ? accountLinks(options.account) : ""
          }</nav>`
          : ""}</header>
        ${options.nav ?? ""}
        <main id="main"${options.wide ? raw(' class="wide"') : ""}>${body}</main>
      </body>
    </html>
  `;
}

function accountLinks({ basePath, csrf }: AccountNav): Html {
  return html`
    <a href="${basePath}/my/tokens">Your connections</a><a
      href="${basePath}/my/access">Your access</a><form
      class="inline" method="post"
      action="${basePath}/logout"><input type="hidden" name="csrf" value="${csrf}"><button type="submit">Sign out</button></form>
  `;
}

/** A complete HTML response with the page's security headers. */
export async function pageResponse(
  status: number,
  options: LayoutOptions,
  body: Html,
  headers: Record<string, string> = {},
): Promise<Response> {
  const text = (await layout(options, body)).toString();
  return new Response(text, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "content-security-policy": pageCsp(options),
      ...headers,
    },
  });
}

/** A moment as every page shows it: to the minute, in UTC ("2026-11-29 06:07 UTC"). */
export function utcMinute(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}
