/**
 * /my/access: the applications a person has let use their tools (their live grants), each
 * with a Revoke button. Server-rendered, escaped, usable without JavaScript.
 */
import { html } from "hono/html";
import type { GrantView } from "../oauth/grant_admin.ts";
import {
  chosen,
  type Html,
  type Notice,
  noticeBlock,
  pageResponse,
  shownText,
  utcMinute,
} from "./layout.ts";

export interface AccessPageContext {
  person: string;
  basePath: string;
  csrf: string;
  /** Server names of a grant's audience. */
  servers: (grant: GrantView) => string[];
  notice?: Notice;
}

function when(ms: number | undefined): string {
  if (ms === undefined) return "before this was recorded";
  return utcMinute(ms);
}

/** The name the client gave itself (or its id), as a page may show it (layout.ts `shownText`). */
function clientLabel(grant: GrantView): string {
  return shownText(grant.clientName ?? grant.clientId ?? "An application");
}

function grantSection(grant: GrantView, ctx: AccessPageContext): Html {
  const label = clientLabel(grant);
  const servers = ctx.servers(grant);
  const titleId = `grant-title-${grant.id}`;
  return html`
    <section class="service" id="grant-${grant.id}" aria-labelledby="${titleId}">
      <div class="service-head">
        <h2 id="${titleId}"><bdi>${label}</bdi></h2>
        <span class="badge ok">Has access</span>
      </div>
      ${grant.clientName && grant.clientId
        ? html`<p class="muted small">Client <code>${chosen(grant.clientId)}</code></p>`
        : ""}
      <p class="small">Can use: ${servers.length
        ? servers.map((server, i) => html`${i ? ", " : ""}<code>${server}</code>`)
        : "no server"}</p>
      <p class="muted small">${grant.issuedVia === "id-jag"
        ? "Allowed by your company's identity provider"
        : "Allowed"} ${when(grant.grantedAt)} · last used ${when(grant.lastUsedAt)}</p>
      <form method="post" action="${ctx.basePath}/my/access/revoke" class="actions tight">
        <input type="hidden" name="csrf" value="${ctx.csrf}">
        <input type="hidden" name="grant" value="${grant.id}">
        <button type="submit" aria-label="Revoke access of ${label}">Revoke</button>
      </form>
    </section>
  `;
}

export function myAccessPage(grants: GrantView[], ctx: AccessPageContext): Promise<Response> {
  return pageResponse(
    200,
    {
      title: "Your access",
      signedInAs: ctx.person,
      account: { basePath: ctx.basePath, csrf: ctx.csrf },
    },
    html`
      <div class="card">
        <h1>Applications with access</h1>
        <p class="muted">These applications may use your tools through Gatehouse. Revoke one
          and it loses access within seconds, its open sessions end, and it must ask you again.</p>
        ${noticeBlock(ctx.notice)}
        ${grants.length
          ? grants.map((grant) => grantSection(grant, ctx))
          : html`<p>No application has access to your tools.</p>`}
      </div>
    `,
  );
}
