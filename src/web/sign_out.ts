/**
 * Signing out of the gateway's single sign-on session. Only a POST carrying this session's CSRF
 * token ends it, so a link, an image or a form on another site cannot sign a person out.
 */
import type { Logger } from "../observability/logger.ts";
import { notSignedInPage, signedOutPage, signOutPage, signOutRefusedPage } from "./pages.ts";
import type { SsoSessions } from "./sso.ts";

export interface SignOutDeps {
  sso: SsoSessions;
  logger: Logger;
  /** The issuer's path, without a trailing slash ("" at the root of the origin). */
  basePath: string;
}

export class SignOut {
  constructor(private readonly deps: SignOutDeps) {}

  /** GET /logout: a confirmation form. */
  async page(request: Request): Promise<Response> {
    const session = await this.deps.sso.fromRequest(request);
    if (!session) return await notSignedInPage();
    const person = session.identity.email ?? session.identity.subject;
    const action = `${this.deps.basePath}/logout`;
    return await signOutPage(person, await this.deps.sso.csrfToken(session), action);
  }

  /** POST /logout: ends the SSO session server-side and clears its cookie. */
  async submit(request: Request, form: URLSearchParams): Promise<Response> {
    const session = await this.deps.sso.fromRequest(request);
    // No session is refused too, cookie untouched: a form posted from another site arrives
    // without the cookie (SameSite=Lax), and a Set-Cookie clearing it in the answer would
    // still sign the person out of their browser.
    if (!session || !(await this.deps.sso.checkCsrf(session, form.get("csrf")))) {
      return await signOutRefusedPage(`${this.deps.basePath}/logout`);
    }
    const cookie = await this.deps.sso.end(session);
    this.deps.logger.info("logout", { subject: session.identity.subject });
    return await signedOutPage({ "set-cookie": cookie });
  }
}
