/** The pages of the login flow: errors, refusals, consent, and signing out. */
import { html } from "hono/html";
import { chosen, type Html, pageResponse, shownText } from "./layout.ts";

export function errorPage(
  status: number,
  title: string,
  message: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return pageResponse(
    status,
    { title },
    html`
      <div class="card" role="alert">
        <h1>${title}</h1>
        <p>${message}</p>
        <p
          class="muted">You can close this window. If this keeps happening, give your administrators the time it happened.</p>
      </div>
    `,
    headers,
  );
}

export interface ConsentView {
  person: string;
  clientName?: string;
  clientId: string;
  redirectUri: string;
  /** The services (server names) the client will be able to use. */
  services: string[];
  requestId: string;
  csrf: string;
  action: string;
}

export function consentPage(view: ConsentView): Promise<Response> {
  const redirect = new URL(view.redirectUri);
  const shownName = view.clientName === undefined ? "An application" : chosen(view.clientName);
  const services: Html = html`${
    view.services.map((service) => html`<li><code>${service}</code></li>`)
  }`;
  return pageResponse(
    200,
    {
      title: "Allow access?",
      signedInAs: view.person,
      formTargets: [
        redirect.protocol.startsWith("http") ? redirect.origin : `${redirect.protocol}`,
      ],
    },
    html`
      <div class="card">
        <h1>Allow ${shownName} to use your tools?</h1>
        <p><strong>${shownName}</strong> is asking to act as you on:</p>
        <ul class="facts">${services}</ul>
        <p class="muted">It will be sent back to <code>${redirect.origin}${redirect
          .pathname}</code>.
      The name is chosen by the application itself; continue only if you just started this sign-in.</p>
        <form method="post" action="${view.action}">
          <input type="hidden" name="request" value="${view.requestId}">
          <input type="hidden" name="csrf" value="${view.csrf}">
          <div class="actions">
            <button class="primary" type="submit" name="decision" value="allow">Allow</button>
            <button type="submit" name="decision" value="deny">Deny</button>
          </div>
        </form>
      </div>
    `,
  );
}

export function signedOutPage(headers: Record<string, string>): Promise<Response> {
  return pageResponse(
    200,
    { title: "Signed out" },
    html`
      <div class="card" role="status">
        <h1>You are signed out</h1>
        <p>Applications you allowed keep their access until it expires or you revoke it.</p>
      </div>
    `,
    headers,
  );
}

/** GET /logout in a browser with no live sign-in. */
export function notSignedInPage(): Promise<Response> {
  return pageResponse(
    200,
    { title: "Not signed in" },
    html`
      <div class="card" role="status">
        <h1>You are not signed in</h1>
        <p>This browser has no Gatehouse sign-in to end.</p>
      </div>
    `,
  );
}

/**
 * A POST /logout without this sign-in's CSRF token: nothing changed. `action` is the logout
 * page, whose own form can sign the person out.
 */
export function signOutRefusedPage(action: string): Promise<Response> {
  return pageResponse(
    403,
    { title: "You were not signed out" },
    html`
      <div class="card" role="alert">
        <h1>You were not signed out</h1>
        <p>This request to sign out did not come from a Gatehouse page open in this browser, so
          nothing was changed: if you were signed in, you still are.</p>
        <p>To sign out, use <a href="${action}">the Sign out page</a>.</p>
      </div>
    `,
  );
}

export function signOutPage(person: string, csrf: string, action: string): Promise<Response> {
  return pageResponse(
    200,
    { title: "Sign out", signedInAs: person },
    html`
      <div class="card">
        <h1>Sign out of Gatehouse?</h1>
        <form method="post" action="${action}">
          <input type="hidden" name="csrf" value="${csrf}">
          <div class="actions"><button class="primary" type="submit">Sign out</button></div>
        </form>
      </div>
    `,
  );
}

export interface AccessRefusedView {
  person: string;
  /** The server whose `access:` refuses the person. */
  server: string;
  /** Every server the application asked for. */
  requested: string[];
  clientName?: string;
  /** The application's redirect URI carrying `access_denied`, for the person to go back. */
  returnTo: string;
}

/**
 * /authorize for a server the person may not use: no code is issued. The page says why; its
 * link takes the person back to the application, which learns `access_denied` there.
 */
export function accessRefusedPage(view: AccessRefusedView): Promise<Response> {
  const app = view.clientName === undefined ? "the application" : chosen(view.clientName);
  const others = view.requested.length > 1
    ? html`<p>It asked for ${
      view.requested.join(", ")
    }; since you may not use one of them, it was given none.</p>`
    : "";
  return pageResponse(
    403,
    { title: "Access not permitted", signedInAs: view.person },
    html`
      <div class="card" role="alert">
        <h1>You may not use “${view.server}”</h1>
        <p>${view.person} may not use the server “${view
          .server}” on this gateway, so ${app} was not given access to it.</p>
        ${others}
        <p>If you need it, ask the gateway's administrators for access to “${view.server}”.</p>
        <div class="actions"><a class="button primary" href="${view
          .returnTo}">Return to ${app}</a></div>
      </div>
    `,
  );
}

export interface AuthorizeErrorView {
  /** What is wrong with the request, as the client is told. */
  description: string;
  clientName?: string;
  /** The client's redirect URI carrying the error: where the person may choose to go. */
  returnTo: string;
}

/**
 * /authorize refused a request of a client nobody vetted, before sign-in: the error is shown
 * here, and the person, not the gateway, decides whether to follow the link to where the client
 * asked to be sent (named in full), so a link on the gateway's domain redirects nowhere by itself.
 */
export function authorizeErrorPage(view: AuthorizeErrorView): Promise<Response> {
  const destination = new URL(view.returnTo);
  const shown = `${destination.origin === "null" ? destination.protocol : destination.origin}${
    destination.origin === "null" ? "" : destination.pathname
  }`;
  const app = view.clientName === undefined ? "the application" : chosen(view.clientName);
  return pageResponse(
    400,
    { title: "This sign-in link cannot be used" },
    html`
      <div class="card" role="alert">
        <h1>This sign-in link cannot be used</h1>
        <p>${view.description}.</p>
        <p>It came from ${app}, which asks to be sent back to <code>${shown}</code>. Go there
          only if you started this sign-in from it; otherwise close this window.</p>
        <div
          class="actions"><a class="button" href="${view
            .returnTo}" rel="noreferrer">Go to ${shownText(destination.host || shown)}</a></div>
      </div>
    `,
  );
}
