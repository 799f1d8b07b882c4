/**
 * /my/access: a signed-in person sees the applications they let use their tools (their live
 * grants) and revokes any of them. The page needs the SSO session (without one the person logs
 * in and comes back); the revoke form carries the session's CSRF token, and a grant id that is
 * not the person's own is refused, whoever's it is.
 */
import { type GrantAdmin, serverNames } from "../oauth/grant_admin.ts";
import { NO_STORE } from "../oauth/errors.ts";
import type { Logger } from "../observability/logger.ts";
import { myAccessPage } from "./access_pages.ts";
import type { LoginFlow } from "./login_flow.ts";
import { errorPage } from "./pages.ts";
import type { SsoSessions } from "./sso.ts";

export interface AccessFlowDeps {
  issuer: string;
  sso: SsoSessions;
  grants: GrantAdmin;
  loginFlow: LoginFlow;
  logger: Logger;
}

/** A grant id as Gatehouse issues them (randomBase64Url(16)); anything else names none. */
const GRANT_ID = /^[A-Za-z0-9_-]{16,64}$/;

export class AccessFlow {
  readonly #basePath: string;

  constructor(private readonly deps: AccessFlowDeps) {
    this.#basePath = new URL(deps.issuer).pathname.replace(/\/$/, "");
  }

  /** GET /my/access */
  async page(request: Request): Promise<Response> {
    const session = await this.deps.sso.fromRequest(request);
    if (!session) return await this.deps.loginFlow.signIn(`${this.#basePath}/my/access`);
    const { identity } = session;
    const grants = await this.deps.grants.list({ user: identity.subject });
    const notice = new URL(request.url).searchParams.get("notice");
    return await myAccessPage(grants, {
      person: identity.email ?? identity.name ?? identity.subject,
      basePath: this.#basePath,
      csrf: await this.deps.sso.csrfToken(session),
      servers: (grant) => serverNames(grant.audience, this.deps.issuer),
      notice: notice === "revoked"
        ? {
          ok: true,
          text:
            "Access revoked. That application can no longer use your tools, and its open sessions end within seconds.",
        }
        : undefined,
    });
  }

  /** POST /my/access/revoke: csrf, grant. */
  async revoke(request: Request, form: URLSearchParams): Promise<Response> {
    const session = await this.deps.sso.fromRequest(request);
    if (!session) {
      return await errorPage(
        401,
        "Your sign-in has expired",
        "Open Your access again to sign in; nothing was changed.",
      );
    }
    if (!(await this.deps.sso.checkCsrf(session, form.get("csrf")))) {
      return await errorPage(
        403,
        "This form has expired",
        "Reload the page and try again; nothing was changed.",
      );
    }
    const grant = form.get("grant") ?? "";
    const user = session.identity.subject;
    if (!GRANT_ID.test(grant) || !(await this.deps.grants.revokeOwn(user, grant))) {
      this.deps.logger.warn("grant revocation refused: not the person's own live grant", {
        user,
      });
      return await errorPage(
        403,
        "Not one of your applications",
        "This access is not yours to revoke, or it has already ended. Reload Your access to see what is left; nothing was changed.",
      );
    }
    this.deps.logger.info("grant revoked", { grant, user, by: "person" });
    return new Response(null, {
      status: 303,
      headers: { location: `${this.#basePath}/my/access?notice=revoked`, ...NO_STORE },
    });
  }
}
