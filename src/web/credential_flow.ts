/**
 * The browser side of per-person credentials: /my/tokens and its forms, connecting and
 * disconnecting a service account over OAuth, and the services step of a sign-in. Every
 * page needs the SSO session (without one the person logs in and comes back); every form
 * carries a CSRF token bound to that session.
 */
import { sha256Base64Url } from "../crypto/base64url.ts";
import type { ServiceConnections } from "../credentials/connections.ts";
import { ServiceOAuthError } from "../credentials/service_oauth.ts";
import {
  type CredentialService,
  TokenInputError,
  type UserCredentials,
} from "../credentials/user_credentials.ts";
import { NO_STORE } from "../oauth/errors.ts";
import type { Logger } from "../observability/logger.ts";
import type { LoginFlow } from "./login_flow.ts";
import { errorPage } from "./pages.ts";
import type { SsoSession, SsoSessions } from "./sso.ts";
import {
  myTokensPage,
  noticeFor,
  type PageContext,
  servicesPage,
  type ServiceView,
} from "./token_pages.ts";

export interface CredentialFlowDeps {
  issuer: string;
  sso: SsoSessions;
  credentials: UserCredentials;
  connections: ServiceConnections;
  loginFlow: LoginFlow;
  logger: Logger;
}

/** A query longer than this is dropped from the page a login returns to (it is stored). */
const MAX_RETURN_QUERY = 2_048;

/** Where a form or a connection returns: the tokens page, or a sign-in's services step. */
const NEXT = /^(tokens|services:[A-Za-z0-9_-]{32})$/;

export class CredentialFlow {
  readonly #basePath: string;

  constructor(private readonly deps: CredentialFlowDeps) {
    this.#basePath = new URL(deps.issuer).pathname.replace(/\/$/, "");
  }

  /** GET /my/tokens */
  async tokensPage(request: Request): Promise<Response> {
    const session = await this.deps.sso.fromRequest(request);
    if (!session) return await this.#signIn(request);
    const url = new URL(request.url);
    const services = this.deps.credentials.services();
    const focus = this.deps.credentials.service(url.searchParams.get("service") ?? "");
    return await myTokensPage(
      await this.#views(session, services),
      await this.#context(session, "tokens", url, focus),
    );
  }

  /** GET /oauth/services?request=ID: what the signing-in client's services need. */
  async servicesStep(request: Request): Promise<Response> {
    const session = await this.deps.sso.fromRequest(request);
    if (!session) return await this.#signIn(request);
    const url = new URL(request.url);
    const pending = await this.deps.loginFlow.awaitingServices(
      session,
      url.searchParams.get("request") ?? "",
    );
    if (!pending) {
      return await errorPage(
        400,
        "This request has expired",
        "It was already completed or took too long. Start again from your application.",
      );
    }
    const services = this.deps.credentials.neededBy(pending.services);
    const focus = this.deps.credentials.service(url.searchParams.get("service") ?? "");
    return await servicesPage(
      await this.#views(session, services),
      await this.#context(session, `services:${pending.id}`, url, focus),
      { clientName: pending.clientName, requestId: pending.id },
    );
  }

  /** POST /my/tokens/set: service, token. */
  async setToken(request: Request, form: URLSearchParams): Promise<Response> {
    const checked = await this.#checkForm(request, form, "manual");
    if (checked instanceof Response) return checked;
    const { session, service, next } = checked;
    try {
      await this.deps.credentials.setManual(
        session.identity.subject,
        service.name,
        form.get("token") ?? "",
      );
    } catch (error) {
      if (error instanceof TokenInputError) return this.#back(next, service.name, error.code);
      throw error;
    }
    this.deps.logger.info("token set", { service: service.name, user: session.identity.subject });
    return this.#back(next, service.name, "saved");
  }

  /** POST /my/tokens/delete: service. */
  async deleteToken(request: Request, form: URLSearchParams): Promise<Response> {
    const checked = await this.#checkForm(request, form, "manual");
    if (checked instanceof Response) return checked;
    const { session, service, next } = checked;
    await this.deps.credentials.remove(session.identity.subject, service.name);
    this.deps.logger.info("token deleted", {
      service: service.name,
      user: session.identity.subject,
    });
    return this.#back(next, service.name, "deleted");
  }

  /** POST /oauth/disconnect: service. Revokes at the service when it offers revocation. */
  async disconnect(request: Request, form: URLSearchParams): Promise<Response> {
    const checked = await this.#checkForm(request, form, "oauth");
    if (checked instanceof Response) return checked;
    const { session, service, next } = checked;
    const outcome = await this.deps.credentials.remove(session.identity.subject, service.name);
    this.deps.logger.info("service disconnected", {
      service: service.name,
      user: session.identity.subject,
      revocation: outcome,
    });
    const notice = outcome === "revoked"
      ? "disconnected"
      : outcome === "failed"
      ? "revoke_failed"
      : "disconnected_here";
    return this.#back(next, service.name, notice);
  }

  /** GET /oauth/connect?service=X[&next=…]: on to the service's authorization endpoint. */
  async connect(request: Request): Promise<Response> {
    const session = await this.deps.sso.fromRequest(request);
    if (!session) return await this.#signIn(request);
    const url = new URL(request.url);
    const service = this.deps.credentials.service(url.searchParams.get("service") ?? "");
    if (!service || service.userToken.kind === "manual") {
      return await errorPage(
        404,
        "No such service",
        "This link names no service you can connect. Open Your connections to see them.",
      );
    }
    const next = url.searchParams.get("next") ?? "tokens";
    try {
      const location = await this.deps.connections.begin({
        user: session.identity.subject,
        service: service.name,
        sessionHash: await sha256Base64Url(session.id),
        next: NEXT.test(next) ? next : "tokens",
      });
      return new Response(null, {
        status: 302,
        headers: { location: location.href, ...NO_STORE },
      });
    } catch (error) {
      this.deps.logger.error("service authorization unavailable", {
        service: service.name,
        reason: (error as Error).message,
      });
      return await errorPage(
        502,
        `${service.userToken.displayName} is unavailable`,
        `Gatehouse could not reach ${service.userToken.displayName}'s sign-in. Try again in a minute.`,
      );
    }
  }

  /** GET /oauth/callback/{service}: the service sends the person back with a code. */
  async callback(request: Request, serviceName: string): Promise<Response> {
    const url = new URL(request.url);
    const state = url.searchParams.get("state") ?? "";
    const pending = state ? await this.deps.connections.take(state) : undefined;
    if (!pending || pending.service !== serviceName) {
      return await errorPage(
        400,
        "This connection has expired",
        "It took too long, or it was already completed. Start again from Your connections.",
      );
    }
    // The state is bound to the SSO session that started it: a callback carried into another
    // browser (or another person's) is refused.
    const session = await this.deps.sso.fromRequest(request);
    const sameSession = session !== undefined &&
      session.identity.subject === pending.user &&
      await sha256Base64Url(session.id) === pending.sessionHash;
    if (!sameSession) {
      return await errorPage(
        400,
        "This connection was started elsewhere",
        "It began in another browser or another sign-in. Start again from Your connections, in this browser.",
      );
    }
    if (url.searchParams.get("error") === "access_denied") {
      return this.#back(pending.next, serviceName, "declined");
    }
    try {
      await this.deps.connections.finish(pending, url, state);
    } catch (error) {
      if (!(error instanceof ServiceOAuthError)) throw error;
      this.deps.logger.warn("service connection failed", {
        service: serviceName,
        user: pending.user,
        reason: error.message,
      });
      return this.#back(pending.next, serviceName, "connect_failed");
    }
    return this.#back(pending.next, serviceName, "connected");
  }

  /** Session, CSRF, and a known service of the right kind; or the page that refuses. */
  async #checkForm(
    request: Request,
    form: URLSearchParams,
    kind: "manual" | "oauth",
  ): Promise<{ session: SsoSession; service: CredentialService; next: string } | Response> {
    const session = await this.deps.sso.fromRequest(request);
    if (!session) {
      return await errorPage(
        401,
        "Your sign-in has expired",
        "Open Your connections again to sign in; nothing was changed.",
      );
    }
    if (!(await this.deps.sso.checkCsrf(session, form.get("csrf")))) {
      return await errorPage(
        403,
        "This form has expired",
        "Reload the page and try again; nothing was changed.",
      );
    }
    const service = this.deps.credentials.service(form.get("service") ?? "");
    // "oauth" forms serve every account people connect (kind oauth and kind mcp).
    if (!service || (service.userToken.kind === "manual") !== (kind === "manual")) {
      return await errorPage(400, "No such service", "Reload the page and try again.");
    }
    const next = form.get("next") ?? "tokens";
    return { session, service, next: NEXT.test(next) ? next : "tokens" };
  }

  /** 303 back to where the form came from, with a notice the page turns into a sentence. */
  #back(next: string, service: string, notice: string): Response {
    const query = `service=${encodeURIComponent(service)}&notice=${notice}`;
    const location = next.startsWith("services:")
      ? `${this.#basePath}/oauth/services?request=${next.slice(9)}&${query}`
      : `${this.#basePath}/my/tokens?${query}#service-${service}`;
    return new Response(null, { status: 303, headers: { location, ...NO_STORE } });
  }

  async #views(session: SsoSession, services: CredentialService[]): Promise<ServiceView[]> {
    return await Promise.all(services.map(async (service) => ({
      service,
      status: await this.deps.credentials.status(session.identity.subject, service.name),
    })));
  }

  async #context(
    session: SsoSession,
    next: string,
    url: URL,
    focus: CredentialService | undefined,
  ): Promise<PageContext> {
    return {
      person: session.identity.email ?? session.identity.name ?? session.identity.subject,
      basePath: this.#basePath,
      csrf: await this.deps.sso.csrfToken(session),
      next,
      notice: noticeFor(url.searchParams.get("notice"), focus),
    };
  }

  /** Log in first, then come back to this very page (its query only if of a sane size). */
  #signIn(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const query = url.search.length <= MAX_RETURN_QUERY ? url.search : "";
    return this.deps.loginFlow.signIn(`${url.pathname}${query}`);
  }
}
