/**
 * The pages where people manage their own service credentials: /my/tokens, and the services
 * step of a sign-in (/oauth/services). Server-rendered, escaped, usable without JavaScript;
 * a stored token is never shown back, at most its last four characters.
 */
import { html } from "hono/html";
import type { CredentialService, CredentialStatus } from "../credentials/user_credentials.ts";
import { MAX_TOKEN_BYTES } from "../credentials/user_credentials.ts";
import { chosen, type Html, type Notice, noticeBlock, pageResponse, utcMinute } from "./layout.ts";

/** One service as a page shows it. */
export interface ServiceView {
  service: CredentialService;
  status: CredentialStatus;
}

export interface PageContext {
  person: string;
  basePath: string;
  csrf: string;
  /** Where forms return: "tokens", or "services:<request id>". */
  next: string;
  notice?: Notice;
}

/** The sentence for each outcome a redirect can report (`?notice=`), by service name. */
const NOTICES: Record<string, (name: string, service: CredentialService) => Notice> = {
  saved: (name) => ({ ok: true, text: `Your ${name} token is saved.` }),
  deleted: (name) => ({ ok: true, text: `Your ${name} token is deleted.` }),
  connected: (name) => ({ ok: true, text: `${name} is connected.` }),
  disconnected: (name) => ({
    ok: true,
    text: `${name} is disconnected, and its access was revoked at ${name}.`,
  }),
  disconnected_here: (name) => ({
    ok: true,
    text:
      `${name} is disconnected here. ${name} offers no way for Gatehouse to revoke its access: remove it in your ${name} account settings if you want it gone there too.`,
  }),
  revoke_failed: (name) => ({
    ok: false,
    text:
      `${name} is disconnected here, but ${name} did not confirm the revocation: remove Gatehouse's access in your ${name} account settings.`,
  }),
  declined: (name) => ({ ok: false, text: `${name} was not connected: access was declined.` }),
  connect_failed: (name) => ({
    ok: false,
    text:
      `${name} could not be connected. Try again; if it keeps failing, tell your administrators.`,
  }),
  empty: () => ({ ok: false, text: "Paste a token before saving." }),
  too_long: () => ({
    ok: false,
    text: `That token is longer than ${MAX_TOKEN_BYTES / 1024} KiB; check what was pasted.`,
  }),
  invalid_characters: () => ({
    ok: false,
    text: "A token cannot contain spaces, line breaks or other invisible characters.",
  }),
  pattern: (name, service) => ({
    ok: false,
    text: `That does not look like a ${name} token${
      service.userToken.instructions ? ` (${service.userToken.instructions})` : ""
    }. Nothing was saved.`,
  }),
};

export function noticeFor(code: string | null, service: CredentialService | undefined) {
  if (!code || !service || !Object.hasOwn(NOTICES, code)) return undefined;
  return NOTICES[code](service.userToken.displayName, service);
}

/** "connect": the person connects an account (kind oauth or mcp); "manual": pastes a token. */
type Way = "connect" | "manual";

function badge(status: CredentialStatus, way: Way): Html {
  if (status.state === "connected") {
    return html`<span class="badge ok">${way === "connect" ? "Connected" : "Token set"}</span>`;
  }
  if (status.state === "reconnect") {
    return html`<span class="badge warn">Needs reconnecting</span>`;
  }
  return html`<span class="badge none">${way === "connect" ? "Not connected" : "No token"}</span>`;
}

function describeStatus(status: CredentialStatus): Html {
  if (status.state === "connected") {
    const how = status.source === "oauth"
      ? "Connected with your account"
      : status.ending
      ? html`Token ending in <code>…${status.ending}</code>`
      : "Token set";
    return html`<p class="muted small">${how} · updated ${utcMinute(status.updatedAt)}</p>`;
  }
  if (status.state === "reconnect") {
    return html`<p class="small">Gatehouse can no longer use it: ${status.reason}.</p>`;
  }
  return html``;
}

function hidden(ctx: PageContext, service: string): Html {
  return html`
    <input type="hidden" name="csrf" value="${ctx.csrf}">
    <input type="hidden" name="service" value="${service}">
    <input type="hidden" name="next" value="${ctx.next}">
  `;
}

function oauthActions(view: ServiceView, ctx: PageContext): Html {
  const { name, userToken } = view.service;
  const connected = view.status.state === "connected";
  // A link, not a form: the browser goes on to the service's own site, where the page's
  // form-action policy would stop a form's redirect.
  const href = `${ctx.basePath}/oauth/connect?service=${name}&next=${ctx.next}`;
  const label = `${
    view.status.state === "missing" ? "Connect" : "Reconnect"
  } ${userToken.displayName}`;
  const connect = html`<a class="button${connected ? "" : " primary"}" href="${href}">${label}</a>`;
  if (view.status.state === "missing") return html`<div class="actions tight">${connect}</div>`;
  return html`<div class="actions tight">${connect}
    <form method="post" action="${ctx.basePath}/oauth/disconnect" class="inline">
      ${hidden(ctx, name)}
      <button type="submit">Disconnect</button>
    </form></div>`;
}

function manualActions(view: ServiceView, ctx: PageContext): Html {
  const { name, userToken } = view.service;
  const id = `token-${name}`;
  const set = view.status.state !== "missing";
  // Delete has a form of its own, submitted by a button beside Update (form="…"), so the
  // two sit together without nesting forms.
  return html`
    ${set
      ? html`<form method="post" action="${ctx.basePath}/my/tokens/delete" id="delete-${name}">
        ${hidden(ctx, name)}
      </form>`
      : ""}
    <form method="post" action="${ctx.basePath}/my/tokens/set">
      ${hidden(ctx, name)}
      <label for="${id}">${set ? "Replace your" : "Your"} ${userToken.displayName} token</label>
      <input id="${id}" name="token" type="password" autocomplete="off" spellcheck="false"
        required maxlength="${MAX_TOKEN_BYTES}"${userToken.instructions
          ? html`
            aria-describedby="${id}-help"
          `
          : ""}>
      ${userToken.instructions
        ? html`<p id="${id}-help" class="muted small">${userToken.instructions}</p>`
        : ""}
      <div class="actions tight">
        <button class="primary" type="submit">${set ? "Update token" : "Save token"}</button>
        ${set ? html`<button type="submit" form="delete-${name}">Delete token</button>` : ""}
      </div>
    </form>
  `;
}

function serviceSection(view: ServiceView, ctx: PageContext): Html {
  const { name, userToken } = view.service;
  const way: Way = userToken.kind === "manual" ? "manual" : "connect";
  return html`
    <section class="service" id="service-${name}" aria-labelledby="title-${name}">
      <div class="service-head">
        <h2 id="title-${name}">${userToken.displayName}</h2>
        ${badge(view.status, way)}
      </div>
      ${describeStatus(view.status)}
      ${way === "connect" && userToken.instructions
        ? html`<p class="muted small">${userToken.instructions}</p>`
        : ""}
      ${way === "connect" ? oauthActions(view, ctx) : manualActions(view, ctx)}
    </section>
  `;
}

export function myTokensPage(views: ServiceView[], ctx: PageContext): Promise<Response> {
  return pageResponse(
    200,
    {
      title: "Your connections",
      signedInAs: ctx.person,
      account: { basePath: ctx.basePath, csrf: ctx.csrf },
    },
    html`
      <div class="card">
        <h1>Your connections</h1>
        <p class="muted">Some tools act as you in another service. Connect your account or
          paste a token once: Gatehouse keeps it encrypted and uses it only for your own
          sessions.</p>
        ${noticeBlock(ctx.notice)}
        ${views.length
          ? views.map((view) => serviceSection(view, ctx))
          : html`<p>No service here needs a credential of yours.</p>`}
      </div>
    `,
  );
}

export interface ServicesStep {
  clientName?: string;
  requestId: string;
}

/** The step between consent and the code: connect what the client's services need. */
export function servicesPage(
  views: ServiceView[],
  ctx: PageContext,
  step: ServicesStep,
): Promise<Response> {
  const missing = views.filter((view) => view.status.state !== "connected");
  const client = step.clientName === undefined ? "Your application" : chosen(step.clientName);
  return pageResponse(
    200,
    {
      title: "Connect your services",
      signedInAs: ctx.person,
      account: { basePath: ctx.basePath, csrf: ctx.csrf },
    },
    html`
      <div class="card">
        <h1>Connect your services</h1>
        <p><strong>${client}</strong> will use tools that act as you in ${views.length === 1
          ? "this service"
          : "these services"}. ${missing.length
          ? "Connect them now, or continue and connect them later from Your connections."
          : "Everything is connected."}</p>
        ${noticeBlock(ctx.notice)}
        ${views.map((view) => serviceSection(view, ctx))}
        <div class="actions">
          <a class="button${missing.length ? "" : " primary"}" href="${ctx
            .basePath}/oauth/complete?request=${step.requestId}">${missing.length
            ? "Continue without connecting"
            : "Continue"}</a>
        </div>
      </div>
    `,
  );
}
