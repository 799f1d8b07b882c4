/**
 * The operator console under `admin.path`: who gets in, and which page or action answers.
 * Only a company sign-in (the SSO session) of a person `admin:` names opens a console session;
 * an Authorization header of any kind (bearer, Basic, an OAuth access token) is never read here.
 * Everyone else signed in gets a 403 page saying as whom and why. Pages are GETs; every action
 * is a POST with the console session's CSRF token from a same-origin page.
 */
import { html } from "hono/html";
import type { AdminConfig } from "../../config/admin_config.ts";
import type { Identity } from "../../core/identity.ts";
import type { Clock } from "../../core/clock.ts";
import type { Logger } from "../../observability/logger.ts";
import type { CurrentIdentity } from "../../oauth/token.ts";
import { pageResponse } from "../layout.ts";
import { errorPage, signedOutPage } from "../pages.ts";
import { redirect, withCookies } from "../redirects.ts";
import { sameOrigin } from "../csrf.ts";
import type { SsoSessions } from "../sso.ts";
import type { ConsoleSignIn } from "./console_sign_in.ts";
import { type ActionName, noticeOf, runAction } from "./actions.ts";
import { adminRefusal, type AdminSession, type AdminSessions } from "./admin_sessions.ts";
import { auditFilter, auditPage } from "./audit_page.ts";
import type { ConsoleContext } from "./frame.ts";
import { LIVE_SCRIPT, LiveStreams } from "./live.ts";
import { overviewPage } from "./overview_page.ts";
import { peoplePage, searchedEmail } from "./people_page.ts";
import type { ConsoleSources, GrantView } from "./sources.ts";
import { toolsPage } from "./tools_page.ts";

export interface ConsoleDeps {
  admin: AdminConfig;
  /** The gateway's base URL; the console is at its path + admin.path. */
  baseUrl: string;
  sessions: AdminSessions;
  /** The company sign-in at the main port; absent on a listener of its own (ownSignIn). */
  sso?: SsoSessions;
  /** On a listener of its own (`admin.listen`): the console's own sign-in and /callback. */
  ownSignIn?: ConsoleSignIn;
  /** Sends the browser to the company sign-in, then back to `returnTo` (a path we built). */
  signIn(returnTo: string): Promise<Response>;
  sources: ConsoleSources;
  /** The gateway's own origins, for the same-origin check of actions. */
  origins: ReadonlySet<string>;
  serversOf(grant: GrantView): string[];
  knownServer(name: string): boolean;
  clock: Clock;
  logger: Logger;
  /** The person as the provider states them now, when their groups are older than groupsMaxAge. */
  currentIdentity?(identity: Identity): Promise<CurrentIdentity>;
}

const PAGES = new Set(["", "/people", "/tools", "/audit", "/live"]);
const ACTIONS: Record<string, ActionName> = {
  "/people/revoke": "revoke",
  "/people/disconnect": "disconnect",
  "/tools/approve": "approve",
  "/tools/refuse": "refuse",
};

export class OperatorConsole {
  readonly root: string;
  readonly #live: LiveStreams;

  constructor(private readonly deps: ConsoleDeps) {
    this.root = new URL(deps.baseUrl).pathname.replace(/\/$/, "") + deps.admin.path;
    this.#live = new LiveStreams(deps.clock);
  }

  get liveStreams(): number {
    return this.#live.open;
  }

  async handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname !== this.root && !url.pathname.startsWith(`${this.root}/`)) {
      return await errorPage(404, "No such page", `The console is at ${this.root}.`);
    }
    const sub = url.pathname.slice(this.root.length).replace(/\/$/, "");
    if (sub === "/live.js" && request.method === "GET") {
      return new Response(LIVE_SCRIPT, {
        headers: {
          "content-type": "text/javascript; charset=utf-8",
          "cache-control": "no-cache",
          "x-content-type-options": "nosniff",
        },
      });
    }
    if (sub === "/callback" && request.method === "GET" && this.deps.ownSignIn) {
      return await this.#returned(request);
    }
    const action = request.method === "POST"
      ? ACTIONS[sub] ?? (sub === "/logout" ? "logout" : undefined)
      : undefined;
    if (request.method === "GET" && !PAGES.has(sub) || request.method !== "GET" && !action) {
      return await errorPage(404, "No such console page", "Open the console from its overview.");
    }
    const session = await this.#session(request);
    if (session instanceof Response) return session;
    if (!session) {
      if (request.method !== "GET" || sub === "/live") {
        return await errorPage(
          401,
          "Your console session has ended",
          "Open the console again to sign in; nothing was changed.",
        );
      }
      return await this.#signIn(request, `${this.root}${sub}`);
    }
    const ctx: ConsoleContext = {
      root: this.root,
      csrf: await this.deps.sessions.csrfToken(session),
      admin: session.identity.email ?? session.identity.subject,
      now: this.deps.clock.now(),
      notice: noticeOf(url.searchParams.get("notice")),
    };
    if (action) return await this.#act(request, session, ctx, action);
    const { sources } = this.deps;
    switch (sub) {
      case "":
        return await overviewPage(ctx, sources);
      case "/people":
        return await peoplePage(ctx, sources, searchedEmail(url), this.deps.serversOf);
      case "/tools":
        return await toolsPage(ctx, sources, pageNumber(url));
      case "/audit": {
        const { filter, page } = auditFilter(url);
        return await auditPage(ctx, sources, filter, page);
      }
      default:
        return this.#live.stream(ctx, sources, session.id, liveSince(url));
    }
  }

  /** The admin's console session, undefined without one, or the 403 page for a non-admin. */
  async #session(request: Request): Promise<AdminSession | Response | undefined> {
    const { admin, sessions } = this.deps;
    const session = await sessions.fromRequest(request);
    // A reload may have taken someone off the list, the provider out of a group: it is
    // checked on every request.
    if (session) {
      const identity = await this.#current(session.identity);
      if (!adminRefusal(identity, admin)) {
        if (identity !== session.identity) await sessions.describe(session, identity);
        return { ...session, identity };
      }
    }
    const sso = await this.deps.sso?.fromRequest(request);
    if (!sso) return undefined;
    const identity = await this.#current(sso.identity);
    if (request.method !== "GET") {
      return adminRefusal(identity, admin) ? await this.#open(identity, "") : undefined;
    }
    // Back to the same page with the cookie set (the page's own path, never a given URL).
    const url = new URL(request.url);
    return await this.#open(identity, `${url.pathname}${url.search}`);
  }

  /**
   * `identity` with its groups as the provider states them now when they are older than
   * `oauth.groupsMaxAge`: an administrator by group taken out of it loses the console then, not
   * when a sign-in of up to 12 hours ends. A person the provider no longer knows keeps nothing.
   */
  async #current(identity: Identity): Promise<Identity> {
    // The console's own sign-in (admin.listen) keeps no provider tokens to ask with, and says
    // nothing of when groups were read: its console session (idle timeout, 12 h) bounds it.
    if (identity.describedAt === undefined) return identity;
    const current = await this.deps.currentIdentity?.(identity);
    if (!current) return identity;
    return current.ok ? current.identity : { subject: identity.subject };
  }

  /** A console session for `identity` and the way back to `to`; or the 403 page. */
  async #open(identity: Identity, to: string, cookies: string[] = []): Promise<Response> {
    const who = identity.email ?? identity.subject;
    const refusal = adminRefusal(identity, this.deps.admin);
    if (refusal) {
      this.deps.logger.warn("console refused: not an administrator", {
        subject: identity.subject,
      });
      return withCookies(await refusedPage(who, refusal, this.root), cookies);
    }
    const opened = await this.deps.sessions.create(identity);
    this.deps.logger.info("console session opened", { subject: identity.subject });
    this.deps.sources.auditAction(who, "console_sign_in", {});
    return redirect(303, to, [...cookies, opened.cookie]);
  }

  /** GET …/callback on a listener of its own: back from the identity provider. */
  async #returned(request: Request): Promise<Response> {
    const back = await this.deps.ownSignIn!.returned(request);
    if (!back.ok) return back.response;
    const to = back.returnTo?.startsWith(`${this.root}`) ? back.returnTo : this.root;
    return await this.#open(back.identity, to, [back.clearCookie]);
  }

  async #signIn(request: Request, returnTo: string): Promise<Response> {
    const search = new URL(request.url).search;
    // Only the query of the page's own filters travels; the path is the console's own.
    const to = search.length < 1_000 ? `${returnTo}${search}` : returnTo;
    return await (this.deps.ownSignIn?.start(to) ?? this.deps.signIn(to));
  }

  async #act(
    request: Request,
    session: AdminSession,
    ctx: ConsoleContext,
    action: ActionName | "logout",
  ): Promise<Response> {
    const form = await readForm(request);
    if (
      !sameOrigin(request, this.deps.origins) ||
      !(await this.deps.sessions.checkCsrf(session, form.get("csrf")))
    ) {
      this.deps.logger.warn("console action refused: no valid CSRF token or another origin", {
        subject: session.identity.subject,
      });
      return await errorPage(
        403,
        "This form has expired",
        "Reload the console page and try again; nothing was changed.",
      );
    }
    if (action === "logout") {
      // The company sign-in ends too: otherwise the next visit would open a console again.
      const cookies = [await this.deps.sessions.end(session)];
      const sso = await this.deps.sso?.fromRequest(request);
      if (sso) cookies.push(await this.deps.sso!.end(sso));
      return withCookies(await signedOutPage({}), cookies);
    }
    const result = await runAction(
      action,
      form,
      ctx.admin,
      this.deps.sources,
      this.deps.knownServer,
    );
    return redirect(303, `${this.root}${result.to}`);
  }
}

async function readForm(request: Request): Promise<URLSearchParams> {
  const type = request.headers.get("content-type") ?? "";
  if (!type.startsWith("application/x-www-form-urlencoded")) return new URLSearchParams();
  try {
    const text = await request.text();
    return new URLSearchParams(text.length <= 1_000_000 ? text : "");
  } catch {
    return new URLSearchParams();
  }
}

/** Where the page's list ended (events newer than it are sent); without one, from now. */
function liveSince(url: URL): number {
  const since = Number(url.searchParams.get("since"));
  return Number.isSafeInteger(since) && since >= 0 ? since : Infinity;
}

function pageNumber(url: URL): number {
  const page = Number(url.searchParams.get("page"));
  return Number.isInteger(page) && page > 0 && page < 100_000 ? page : 0;
}

/** Signed in, but not an administrator: who they are signed in as, and why that is not enough. */
function refusedPage(who: string, why: string, root: string): Promise<Response> {
  return pageResponse(
    403,
    { title: "Not an administrator", signedInAs: who },
    html`
      <div class="card" role="alert">
        <h1>This console is for the gateway's administrators</h1>
        <p>You are signed in as <strong><bdi>${who}</bdi></strong>.</p>
        <p>${why}</p>
        <p class="muted">If you should have access, ask the gateway's administrators to add you to
              <code>admin.emails</code> or one of the groups in <code>admin.groups</code>. To sign in as
              someone else, sign out first.</p>
        <p class="muted small">Console: <code>${root}</code></p>
      </div>
    `,
  );
}
