/**
 * People: find a person by e-mail address; see their sessions on this replica, their grants
 * (each with Revoke), their upstream connections (each with Disconnect), and what each
 * server's `access:` decides for them, with the rule that decides it.
 */
import { html } from "hono/html";
import type { Html } from "../layout.ts";
import { type ConsoleContext, consolePage, csrfField } from "./frame.ts";
import type { ConsoleSources, GrantView } from "./sources.ts";
import { ago, minuteText, shown, visible } from "./text.ts";

/** The most an address may be; longer is not one (RFC 5321 allows 254). */
const MAX_EMAIL = 320;

export function searchedEmail(url: URL): string | undefined {
  const email = url.searchParams.get("email")?.trim().toLowerCase();
  return email && email.length <= MAX_EMAIL ? email : undefined;
}

function searchForm(ctx: ConsoleContext, email: string | undefined): Html {
  return html`
    <form class="filters" method="get" action="${ctx.root}/people" role="search">
      <div><label for="email">E-mail address</label>
          <input id="email" name="email" type="text" size="32" value="${email ?? ""}"
            autocomplete="off" spellcheck="false" maxlength="${MAX_EMAIL}"></div>
      <button type="submit">Find</button>
    </form>
  `;
}

function sessionsTable(
  ctx: ConsoleContext,
  sources: ConsoleSources,
  email: string,
  clientNames: Map<string, string>,
): Html {
  const rows = sources.sessions(email);
  if (!rows.length) return html`<p class="muted">No open session on this replica.</p>`;
  return html`
    <table>
      <thead>
        <tr>
          <th scope="col">Server</th>
          <th scope="col">Client</th>
          <th
            scope="col">Revision</th>
          <th scope="col">Started</th>
          <th scope="col">Last call</th>
        </tr>
      </thead>
      <tbody>${rows.map((row) =>
        html`
          <tr>
            <td>${row.server}</td>
            <td>${shown(row.client ? clientNames.get(row.client) ?? row.client : "—", 100)}</td>
            <td>${row.revision}</td>
            <td>${minuteText(row.startedAt)}</td>
            <td>${ago(row.lastUsedAt, ctx.now)}</td>
          </tr>
        `
      )}</tbody>
    </table>
  `;
}

function grantRow(ctx: ConsoleContext, grant: GrantView, email: string, servers: string[]): Html {
  const label = grant.clientName ?? grant.clientId ?? "an application";
  return html`
    <tr id="grant-${grant.id}">
      <td>${shown(label, 100)}${grant.clientName && grant.clientId
        ? html`<div class="small muted"><code>${shown(grant.clientId, 60)}</code></div>`
        : ""}</td>
      <td>${grant.issuedVia === "id-jag"
        ? "ID-JAG (jwt-bearer, the company IdP's say-so)"
        : "signed in and allowed (authorization code)"}</td>
      <td>${servers.map((server, i) =>
        html`${i ? ", " : ""}<code>${shown(server, 60)}</code>`
      )}</td>
      <td>${minuteText(grant.grantedAt)}</td>
      <td>${ago(grant.lastUsedAt, ctx.now)}</td>
      <td>
        <form method="post" action="${ctx.root}/people/revoke">${csrfField(ctx)}
          <input type="hidden" name="grant" value="${grant.id}">
          <input type="hidden" name="email" value="${email}">
          <button type="submit" aria-label="Revoke the grant of ${visible(label).slice(
            0,
            100,
          )}">Revoke</button></form>
      </td>
    </tr>
  `;
}

function grantsTable(
  ctx: ConsoleContext,
  grants: GrantView[],
  email: string,
  servers: (grant: GrantView) => string[],
): Html {
  if (!grants.length) return html`<p class="muted">No live grant.</p>`;
  return html`
    <table>
      <thead>
        <tr>
          <th scope="col">Client</th>
          <th scope="col">How issued</th>
          <th
            scope="col">Servers it may use</th>
          <th scope="col">Granted</th>
          <th scope="col">Last used</th>
          <th
            scope="col"><span class="muted">Action</span></th>
        </tr>
      </thead>
      <tbody>${grants.map((grant) => grantRow(ctx, grant, email, servers(grant)))}</tbody>
    </table>
  `;
}

async function connectionsTable(
  ctx: ConsoleContext,
  sources: ConsoleSources,
  user: string | undefined,
  email: string,
): Promise<Html> {
  if (!user) return html`<p class="muted">Unknown until the person has a grant or a session.</p>`;
  const rows = (await sources.connections(user)).filter((row) =>
    row.kind !== "manual" || row.state !== "missing"
  );
  if (!rows.length) {
    return html`<p class="muted">No server here connects to a service as a person.</p>`;
  }
  return html`
    <table>
      <thead>
        <tr>
          <th scope="col">Server</th>
          <th scope="col">Kind</th>
          <th
            scope="col">State</th>
          <th scope="col">Connected</th>
          <th scope="col">Scopes</th>
          <th
            scope="col">Token expires</th>
          <th scope="col"><span class="muted">Action</span></th>
        </tr>
      </thead>
      <tbody>${rows.map((row) =>
        html`
          <tr id="connection-${row.server}">
            <td>${row.server}</td>
            <td>${row.kind}</td>
            <td>${row.state === "connected"
              ? "connected"
              : row.state === "missing"
              ? "not connected"
              : html`needs reconnecting: ${shown(row.reason ?? "", 80)}`}</td>
            <td>${minuteText(row.updatedAt)}</td>
            <td>${shown(row.scopes ?? "—", 80)}</td>
            <td>${minuteText(row.expiresAt)}</td>
            <td>${row.state === "missing"
              ? ""
              : html`<form method="post" action="${ctx.root}/people/disconnect">${csrfField(ctx)}
          <input type="hidden" name="user" value="${user}">
          <input type="hidden" name="server" value="${row.server}">
          <input type="hidden" name="email" value="${email}">
          <button type="submit" aria-label="Disconnect ${row.server}">Disconnect</button></form>`}</td>
          </tr>
        `
      )}</tbody>
    </table>
  `;
}

function accessTable(
  ctx: ConsoleContext,
  sources: ConsoleSources,
  email: string,
  groups: readonly string[] | undefined,
): Html {
  const rows = sources.access({ email, groups: groups ?? [] });
  return html`
    ${groups === undefined
      ? html`<p class="small muted">Groups are taken from a live session; this person has none here,
      so rules by group are judged as if they had no group.</p>`
      : html`<p class="small muted">Groups of their session (those the configuration names): ${
        groups.length ? shown(groups.join(", "), 200) : "none"
      }.</p>`}
        <table>
      <thead>
        <tr>
          <th scope="col">Server</th>
          <th scope="col">Decision</th>
          <th scope="col">Rule</th>
        </tr>
      </thead>
      <tbody>${rows.map((row) =>
        html`
          <tr>
            <td><a href="${ctx.root}/audit?server=${encodeURIComponent(
              row.server,
            )}&amp;person=${encodeURIComponent(email)}">${row.server}</a></td>
            <td><span class="state ${row.allowed ? "up" : "failing"}">${row.allowed
              ? "✓ allowed"
              : "✗ refused"}</span></td>
            <td>${shown(row.rule, 200)}</td>
          </tr>
        `
      )}</tbody>
    </table>
  `;
}

export async function peoplePage(
  ctx: ConsoleContext,
  sources: ConsoleSources,
  email: string | undefined,
  serversOf: (grant: GrantView) => string[],
): Promise<Response> {
  if (!email) {
    return await consolePage(
      ctx,
      "people",
      "People",
      html`<section class="card">
      <h1>People</h1>
      <p class="muted">Find a person by the e-mail address they sign in with.</p>
      ${searchForm(ctx, undefined)}</section>`,
    );
  }
  const grants = await sources.grants(email);
  const sessions = sources.sessions(email);
  const clientNames = new Map(
    grants.flatMap((grant) =>
      grant.clientId && grant.clientName ? [[grant.clientId, grant.clientName]] : []
    ),
  );
  const user = grants.find((grant) => grant.userId)?.userId ?? sessions[0]?.user;
  const audit = `${ctx.root}/audit?person=${encodeURIComponent(email)}`;
  return await consolePage(
    ctx,
    "people",
    "People",
    html`
      <section class="card">
            <h1>${shown(email, 80)}</h1>
            ${searchForm(ctx, email)}
            <p><a href="${audit}">Audit events of this person</a></p>
          </section>
      <section class="card" aria-labelledby="sessions-title"><h2 id="sessions-title">Sessions</h2>
            ${sessionsTable(ctx, sources, email, clientNames)}</section>
      <section class="card" aria-labelledby="grants-title"><h2 id="grants-title">Grants</h2>
            ${grantsTable(ctx, grants, email, serversOf)}</section>
      <section class="card"
        aria-labelledby="connections-title"><h2 id="connections-title">Upstream connections</h2>
            ${await connectionsTable(ctx, sources, user, email)}</section>
      <section class="card" aria-labelledby="access-title"><h2 id="access-title">Access by server</h2>
            ${accessTable(ctx, sources, email, sessions[0]?.groups)}</section>
    `,
  );
}
