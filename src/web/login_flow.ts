/**
 * The browser side of the authorization server: /authorize → company login → consent →
 * authorization code back to the client; and signing out. Each step takes a Request and
 * returns a Response; what it decides comes from `oauth/` (protocol) and `idp/` (login).
 */
import type { OAuthConfig } from "../config/types.ts";
import type { Clock } from "../core/clock.ts";
import type { Identity } from "../core/identity.ts";
import { sha256Base64Url } from "../crypto/base64url.ts";
import { matchesHash } from "../crypto/compare.ts";
import { s256Challenge } from "../crypto/pkce.ts";
import { randomBase64Url } from "../crypto/random.ts";
import { type IdentityProvider, IdpError } from "../idp/provider.ts";
import { type AuthorizationRequest, checkAuthorizationRequest } from "../oauth/authorize.ts";
import type { ClientDirectory } from "../oauth/client_directory.ts";
import { NO_STORE, OAuthError, oauthErrorRedirect } from "../oauth/errors.ts";
import type { GrantStore } from "../oauth/grants.ts";
import type { Logger } from "../observability/logger.ts";
import { KEYS } from "../store/keys.ts";
import type { Store } from "../store/store.ts";
import { clearCookie, type CookiePolicy, readCookie, setCookie } from "./cookies.ts";
import {
  consentPage,
  errorPage,
  notSignedInPage,
  signedOutPage,
  signOutPage,
  signOutRefusedPage,
} from "./pages.ts";
import { type PendingAuthorization, PendingAuthorizations } from "./pending_authorizations.ts";
import type { SsoSession, SsoSessions } from "./sso.ts";

export interface LoginFlowDeps {
  issuer: string;
  oauth: OAuthConfig;
  store: Store;
  clock: Clock;
  logger: Logger;
  clients: ClientDirectory;
  grants: GrantStore;
  sso: SsoSessions;
  idp: IdentityProvider;
  cookies: CookiePolicy;
  resolveResource(resource: string): string | undefined;
  checkAccess(identity: Identity): string | undefined;
  /** Services among these audiences that act as the person and lack their credential. */
  credentialsMissing(audience: string[], user: string): Promise<string[]>;
}

/** An authorization waiting on the services page, as that page shows it. */
export interface AwaitingServices {
  id: string;
  clientName?: string;
  /** Server names the client will use. */
  services: string[];
}

interface LoginState {
  /** The /authorize request this login serves; or, for a browser page, where to return. */
  pendingId?: string;
  returnTo?: string;
  nonce: string;
  codeVerifier: string;
  /** Hash of the login cookie: the callback must arrive in the browser that started it. */
  bindingHash: string;
  expiresAt: number;
}

interface ConsentRecord {
  audience: string[];
  grantedAt: number;
}

const LOGIN_COOKIE = "gatehouse_login";

export class LoginFlow {
  readonly #pending: PendingAuthorizations;

  constructor(private readonly deps: LoginFlowDeps) {
    this.#pending = new PendingAuthorizations(deps.store, deps.clock);
  }

  get callbackUri(): string {
    return `${this.deps.issuer}/oauth/callback`;
  }

  async authorize(request: Request): Promise<Response> {
    const { deps } = this;
    const check = await checkAuthorizationRequest(new URL(request.url).searchParams, deps);
    if (!check.ok && check.kind === "page") {
      return await errorPage(400, "This sign-in link cannot be used", check.error.description);
    }
    if (!check.ok) {
      return oauthErrorRedirect(check.redirectUri, check.error, check.state, deps.issuer);
    }
    const pendingId = this.#pending.newId();
    const pending: PendingAuthorization = {
      request: check.request,
      expiresAt: deps.clock.now() + deps.oauth.authorizationRequestTtlMs,
    };
    const session = await deps.sso.fromRequest(request);
    if (session && !deps.checkAccess(session.identity)) {
      return await this.#afterLogin(session, pendingId, pending, {});
    }
    // Kept across the round trip to the identity provider; the callback takes it back.
    await this.#pending.save(pendingId, pending);
    return await this.#startLogin({ pendingId });
  }

  /**
   * Sends a browser page's visitor to log in, then back to `returnTo` (a path on this gateway
   * that the caller built, never one taken from the request as given).
   */
  signIn(returnTo: string): Promise<Response> {
    return this.#startLogin({ returnTo });
  }

  async #startLogin(next: { pendingId: string } | { returnTo: string }): Promise<Response> {
    const { deps } = this;
    const state = randomBase64Url(24);
    const binding = randomBase64Url(24);
    const codeVerifier = randomBase64Url(48);
    const login: LoginState = {
      ...next,
      nonce: randomBase64Url(24),
      codeVerifier,
      bindingHash: await sha256Base64Url(binding),
      expiresAt: deps.clock.now() + deps.oauth.authorizationRequestTtlMs,
    };
    await deps.store.set(KEYS.login(await sha256Base64Url(state)), login, login.expiresAt);
    let location: URL;
    try {
      location = await deps.idp.authorizationUrl({
        state,
        nonce: login.nonce,
        codeChallenge: await s256Challenge(codeVerifier),
        redirectUri: this.callbackUri,
      });
    } catch (error) {
      deps.logger.error("identity provider unavailable", { error });
      return await errorPage(
        502,
        "Sign-in is unavailable",
        "The company identity provider could not be reached. Try again in a minute.",
      );
    }
    return new Response(null, {
      status: 302,
      headers: {
        location: location.href,
        "set-cookie": setCookie(
          deps.cookies,
          LOGIN_COOKIE,
          binding,
          deps.oauth.authorizationRequestTtlMs / 1000,
        ),
        ...NO_STORE,
      },
    });
  }

  /** GET /oauth/callback: the identity provider sends the person back here. */
  async callback(request: Request): Promise<Response> {
    const { deps } = this;
    const url = new URL(request.url);
    const state = url.searchParams.get("state");
    const login = state
      ? await deps.store.consume<LoginState>(KEYS.login(await sha256Base64Url(state)))
      : undefined;
    if (!state || !login || login.expiresAt <= deps.clock.now()) {
      return await errorPage(
        400,
        "This sign-in has expired",
        "It took too long, or it was already completed. Start again from your application.",
      );
    }
    const binding = readCookie(request.headers.get("cookie"), deps.cookies, LOGIN_COOKIE);
    const bindingOk = binding !== undefined && await matchesHash(binding, login.bindingHash);
    if (!bindingOk) {
      return await errorPage(
        400,
        "This sign-in was started elsewhere",
        "The sign-in began in another browser or its cookie was lost. Start again from your application, in this browser.",
      );
    }
    const pending = login.pendingId ? await this.#pending.take(login.pendingId) : undefined;
    if (login.pendingId && !pending) {
      return await errorPage(400, "This sign-in has expired", "Start again from your application.");
    }
    let identity: Identity;
    try {
      identity = await deps.idp.completeLogin({
        callbackUrl: url,
        state,
        nonce: login.nonce,
        codeVerifier: login.codeVerifier,
        redirectUri: this.callbackUri,
      });
    } catch (error) {
      if (!(error instanceof IdpError)) throw error;
      deps.logger.warn("login failed at the identity provider", { reason: error.code });
      return await errorPage(
        error.code === "login_refused" ? 403 : 502,
        "Sign-in did not complete",
        error.message,
      );
    }
    const refusal = deps.checkAccess(identity);
    if (refusal) {
      deps.logger.warn("login refused by the access policy", { subject: identity.subject });
      return await errorPage(403, "Access not permitted", refusal);
    }
    deps.logger.info("login", { subject: identity.subject });
    const { session, cookie } = await deps.sso.create(identity);
    const cookies = { "set-cookie": [cookie, clearCookie(deps.cookies, LOGIN_COOKIE)] };
    if (!login.pendingId || !pending) {
      const back = new Response(null, {
        status: 303,
        headers: { location: login.returnTo ?? `${this.#basePath}/my/tokens`, ...NO_STORE },
      });
      return withCookies(back, cookies);
    }
    return await this.#afterLogin(session, login.pendingId, pending, cookies);
  }

  get #basePath(): string {
    return new URL(this.deps.issuer).pathname.replace(/\/$/, "");
  }

  /** Consent if this client is new to the person, else the code straight away. */
  async #afterLogin(
    session: SsoSession,
    pendingId: string,
    pending: PendingAuthorization,
    headers: { "set-cookie"?: string[] },
  ): Promise<Response> {
    const { deps } = this;
    const { request } = pending;
    const consent = await deps.store.get<ConsentRecord>(
      KEYS.consent(session.identity.subject, request.clientId),
    );
    if (consent && request.audience.every((uri) => consent.audience.includes(uri))) {
      return withCookies(await this.#proceed(pendingId, pending, session.identity), headers);
    }
    await this.#pending.save(pendingId, { ...pending, subject: session.identity.subject });
    const page = await consentPage({
      person: session.identity.email ?? session.identity.name ?? session.identity.subject,
      clientName: request.clientName,
      clientId: request.clientId,
      redirectUri: request.redirectUri,
      services: request.audience.map((uri) => uri.slice(deps.issuer.length + 1)),
      requestId: pendingId,
      csrf: await deps.sso.csrfToken(session),
      action: `${this.#basePath}/authorize/consent`,
    });
    return withCookies(page, headers);
  }

  /** POST /authorize/consent: the person's answer. */
  async consent(request: Request, form: URLSearchParams): Promise<Response> {
    const { deps } = this;
    const session = await deps.sso.fromRequest(request);
    if (!session) {
      return await errorPage(
        401,
        "Your sign-in has expired",
        "Start again from your application.",
      );
    }
    if (!(await deps.sso.checkCsrf(session, form.get("csrf")))) {
      return await errorPage(403, "This form has expired", "Reload the page and try again.");
    }
    const pendingId = form.get("request") ?? "";
    const pending = await this.#pending.take(pendingId);
    if (!pending || pending.subject !== session.identity.subject) {
      return await errorPage(
        400,
        "This request has expired",
        "It was already answered or took too long. Start again from your application.",
      );
    }
    const { request: authorization } = pending;
    if (form.get("decision") !== "allow") {
      deps.logger.info("consent denied", {
        subject: session.identity.subject,
        clientId: authorization.clientId,
      });
      return oauthErrorRedirect(
        authorization.redirectUri,
        new OAuthError("access_denied", "the person declined to grant access"),
        authorization.state,
        deps.issuer,
      );
    }
    const key = KEYS.consent(session.identity.subject, authorization.clientId);
    const previous = await deps.store.get<ConsentRecord>(key);
    await deps.store.set(
      key,
      {
        audience: [...new Set([...(previous?.audience ?? []), ...authorization.audience])],
        grantedAt: deps.clock.now(),
      } satisfies ConsentRecord,
    );
    return await this.#proceed(pendingId, pending, session.identity);
  }

  /**
   * After consent: the code, unless a service the client will use acts as the person and
   * lacks their credential; then the services page first, which continues at /oauth/complete.
   */
  async #proceed(
    pendingId: string,
    pending: PendingAuthorization,
    identity: Identity,
  ): Promise<Response> {
    const { deps } = this;
    const missing = await deps.credentialsMissing(pending.request.audience, identity.subject);
    if (missing.length === 0) return await this.#issueCode(pending.request, identity);
    await this.#pending.save(pendingId, { ...pending, subject: identity.subject, consented: true });
    return new Response(null, {
      status: 303,
      headers: {
        location: `${this.#basePath}/oauth/services?request=${pendingId}`,
        ...NO_STORE,
      },
    });
  }

  /** The consented authorization this person is connecting services for, if it is theirs. */
  async awaitingServices(
    session: SsoSession,
    pendingId: string,
  ): Promise<AwaitingServices | undefined> {
    const pending = await this.#pending.peek(pendingId);
    if (!this.#ownConsented(pending, session)) return undefined;
    return {
      id: pendingId,
      clientName: pending!.request.clientName,
      services: pending!.request.audience.map((uri) => uri.slice(this.deps.issuer.length + 1)),
    };
  }

  /** GET /oauth/complete: issues the code the services page held back, to its own person. */
  async complete(request: Request): Promise<Response> {
    const { deps } = this;
    const session = await deps.sso.fromRequest(request);
    const pendingId = new URL(request.url).searchParams.get("request") ?? "";
    if (!session) {
      return await errorPage(401, "Your sign-in has expired", "Start again from your application.");
    }
    // Checked before taking it, so someone else's request id cannot be used to spoil it.
    const pending = this.#ownConsented(await this.#pending.peek(pendingId), session)
      ? await this.#pending.take(pendingId)
      : undefined;
    if (!pending) {
      return await errorPage(
        400,
        "This request has expired",
        "It was already completed or took too long. Start again from your application.",
      );
    }
    return await this.#issueCode(pending.request, session.identity);
  }

  #ownConsented(pending: PendingAuthorization | undefined, session: SsoSession): boolean {
    return pending?.consented === true && pending.subject === session.identity.subject;
  }

  async #issueCode(request: AuthorizationRequest, identity: Identity): Promise<Response> {
    const { deps } = this;
    const code = await deps.grants.issueCode({
      clientId: request.clientId,
      identity,
      audience: request.audience,
      scope: request.scope,
      redirectUri: request.redirectUri,
      codeChallenge: request.codeChallenge,
    });
    const location = new URL(request.redirectUri);
    location.searchParams.set("code", code);
    location.searchParams.set("state", request.state);
    location.searchParams.set("iss", deps.issuer);
    return new Response(null, { status: 302, headers: { location: location.href, ...NO_STORE } });
  }

  /**
   * GET /logout: a confirmation form. Signing out is a POST carrying this session's CSRF
   * token, so a link or an image on another site cannot do it.
   */
  async logoutPage(request: Request): Promise<Response> {
    const session = await this.deps.sso.fromRequest(request);
    if (!session) return await notSignedInPage();
    const person = session.identity.email ?? session.identity.subject;
    const action = `${this.#basePath}/logout`;
    return await signOutPage(person, await this.deps.sso.csrfToken(session), action);
  }

  /** POST /logout: ends the SSO session server-side and clears its cookie. */
  async logout(request: Request, form: URLSearchParams): Promise<Response> {
    const session = await this.deps.sso.fromRequest(request);
    // No session is refused too, cookie untouched: a form posted from another site arrives
    // without the cookie (SameSite=Lax), and a Set-Cookie clearing it in the answer would
    // still sign the person out of their browser.
    if (!session || !(await this.deps.sso.checkCsrf(session, form.get("csrf")))) {
      return await signOutRefusedPage(`${this.#basePath}/logout`);
    }
    const cookie = await this.deps.sso.end(session);
    this.deps.logger.info("logout", { subject: session.identity.subject });
    return await signedOutPage({ "set-cookie": cookie });
  }
}

function withCookies(response: Response, headers: { "set-cookie"?: string[] }): Response {
  for (const cookie of headers["set-cookie"] ?? []) response.headers.append("set-cookie", cookie);
  return response;
}
