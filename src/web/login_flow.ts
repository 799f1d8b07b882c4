/**
 * The browser side of the authorization server, as the routes see it: /authorize → company
 * login → consent → authorization code back to the client; and signing out. This class only
 * puts the steps in order; each step's work lives in its own module:
 * - `idp_round_trip.ts` (with `login_state.ts`): to the identity provider and back;
 * - `authorization_completion.ts`: consent, the services step, the authorization code;
 * - `pending_authorizations.ts`: the /authorize request kept while the person logs in;
 * - `sign_out.ts`: ending the SSO session.
 * What each step decides comes from `oauth/` (protocol) and `idp/` (login and access policy).
 */
import type { OAuthConfig } from "../config/types.ts";
import type { Clock } from "../core/clock.ts";
import type { Identity } from "../core/identity.ts";
import type { IdpTokenVault } from "../credentials/idp_token_vault.ts";
import type { IdentityProvider } from "../idp/provider.ts";
import { checkAuthorizationRequest } from "../oauth/authorize.ts";
import type { ClientDirectory } from "../oauth/client_directory.ts";
import { isOperatorVetted } from "../oauth/clients.ts";
import { oauthErrorLocation, oauthErrorRedirect } from "../oauth/errors.ts";
import type { CurrentIdentity } from "../oauth/token.ts";
import type { GrantStore } from "../oauth/grants.ts";
import type { Logger } from "../observability/logger.ts";
import type { Store } from "../store/store.ts";
import {
  AuthorizationCompletion,
  type AwaitingServices,
  type ServerRefusal,
} from "./authorization_completion.ts";
import type { CookiePolicy } from "./cookies.ts";
import { IdpRoundTrip } from "./idp_round_trip.ts";
import { LoginStates } from "./login_state.ts";
import { authorizeErrorPage, errorPage } from "./pages.ts";
import { type PendingAuthorization, PendingAuthorizations } from "./pending_authorizations.ts";
import { redirect } from "./redirects.ts";
import { SignOut } from "./sign_out.ts";
import type { SsoSession, SsoSessions } from "./sso.ts";

export type { AwaitingServices } from "./authorization_completion.ts";

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
  /** Where the provider's tokens of each sign-in are kept (sealed) for later use. */
  idpTokens: IdpTokenVault;
  cookies: CookiePolicy;
  resolveResource(resource: string): string | undefined;
  checkAccess(identity: Identity): string | undefined;
  /** The first of these audiences whose server's `access:` refuses the person, and why. */
  checkServerAccess(identity: Identity, audience: string[]): ServerRefusal | undefined;
  /** Services among these audiences that act as the person and lack their credential. */
  credentialsMissing(audience: string[], user: string): Promise<string[]>;
  /** The person as the identity provider states them now, when their groups are too old. */
  currentIdentity?(identity: Identity): Promise<CurrentIdentity>;
  /** Told of each accepted sign-in (the groups it named stand in for an ID-JAG's, later). */
  onLogin?(identity: Identity): Promise<void>;
}

export class LoginFlow {
  readonly #pending: PendingAuthorizations;
  readonly #roundTrip: IdpRoundTrip;
  readonly #completion: AuthorizationCompletion;
  readonly #signOut: SignOut;
  readonly #basePath: string;

  constructor(private readonly deps: LoginFlowDeps) {
    this.#basePath = new URL(deps.issuer).pathname.replace(/\/$/, "");
    this.#pending = new PendingAuthorizations(deps.store, deps.clock);
    const states = new LoginStates({
      store: deps.store,
      clock: deps.clock,
      cookies: deps.cookies,
      ttlMs: deps.oauth.authorizationRequestTtlMs,
    });
    this.#roundTrip = new IdpRoundTrip({
      idp: deps.idp,
      logger: deps.logger,
      states,
      callbackUri: this.callbackUri,
    });
    this.#completion = new AuthorizationCompletion({
      issuer: deps.issuer,
      basePath: this.#basePath,
      store: deps.store,
      clock: deps.clock,
      logger: deps.logger,
      grants: deps.grants,
      sso: deps.sso,
      pending: this.#pending,
      credentialsMissing: deps.credentialsMissing,
      checkServerAccess: deps.checkServerAccess,
      currentIdentity: deps.currentIdentity,
    });
    this.#signOut = new SignOut({ sso: deps.sso, logger: deps.logger, basePath: this.#basePath });
  }

  get callbackUri(): string {
    return `${this.deps.issuer}/oauth/callback`;
  }

  /** GET /authorize: checks the request, then the login (skipped for a signed-in person). */
  async authorize(request: Request): Promise<Response> {
    const { deps } = this;
    const check = await checkAuthorizationRequest(new URL(request.url).searchParams, deps);
    if (!check.ok && check.kind === "page") {
      if (check.error.logDetail !== undefined) {
        deps.logger.warn("an authorization request was refused", {
          reason: check.error.code,
          detail: check.error.description,
          cause: check.error.logDetail,
        });
      }
      return await errorPage(400, "This sign-in link cannot be used", check.error.description);
    }
    if (!check.ok) {
      if (isOperatorVetted(check.client)) {
        return oauthErrorRedirect(check.redirectUri, check.error, check.state, deps.issuer);
      }
      // Nobody vetted this client: the person reads the error here and decides whether to go on.
      return await authorizeErrorPage({
        description: check.error.description,
        clientName: check.client.clientName,
        returnTo: oauthErrorLocation(check.redirectUri, check.error, check.state, deps.issuer),
      });
    }
    const pendingId = this.#pending.newId();
    const pending: PendingAuthorization = {
      request: check.request,
      expiresAt: deps.clock.now() + deps.oauth.authorizationRequestTtlMs,
    };
    let session = await deps.sso.fromRequest(request);
    const current = session && await deps.currentIdentity?.(session.identity);
    if (session && current) {
      if (current.ok) session = { ...session, identity: current.identity };
      else {
        // The provider no longer accepts the person: this sign-in is over; they sign in afresh.
        await deps.sso.end(session);
        session = undefined;
      }
    }
    if (session && !deps.checkAccess(session.identity)) {
      return await this.#completion.afterLogin(session, pendingId, pending, []);
    }
    // Kept across the round trip to the identity provider; the callback takes it back.
    await this.#pending.save(pendingId, pending);
    return await this.#roundTrip.start({ pendingId });
  }

  /**
   * Sends a browser page's visitor to log in, then back to `returnTo` (a path on this gateway
   * that the caller built, never one taken from the request as given).
   */
  signIn(returnTo: string): Promise<Response> {
    return this.#roundTrip.start({ returnTo });
  }

  /** GET /oauth/callback: the identity provider sends the person back here. */
  async callback(request: Request): Promise<Response> {
    const { deps } = this;
    const check = await this.#roundTrip.check(request);
    if (!check.ok) return check.response;
    const { login } = check.returned;
    // Taken before the code is exchanged: a request that expired meanwhile costs no exchange.
    const pending = login.pendingId ? await this.#pending.take(login.pendingId) : undefined;
    if (login.pendingId && !pending) {
      return await errorPage(400, "This sign-in has expired", "Start again from your application.");
    }
    const outcome = await this.#roundTrip.finish(check.returned);
    if (!outcome.ok) return outcome.response;
    // When the provider stated the groups: tokens issued later read them again once too old.
    const identity: Identity = { ...outcome.identity, describedAt: deps.clock.now() };
    const refusal = deps.checkAccess(identity);
    if (refusal) {
      deps.logger.warn("login refused by the access policy", { subject: identity.subject });
      return await errorPage(403, "Access not permitted", refusal);
    }
    await deps.idpTokens.keep(identity.subject, outcome.tokens);
    deps.logger.info("login", { subject: identity.subject });
    await deps.onLogin?.(identity);
    const { session, cookie } = await deps.sso.create(identity);
    const cookies = [cookie, this.#roundTrip.clearCookie()];
    if (!login.pendingId || !pending) {
      return redirect(303, login.returnTo ?? `${this.#basePath}/my/tokens`, cookies);
    }
    return await this.#completion.afterLogin(session, login.pendingId, pending, cookies);
  }

  /** POST /authorize/consent: the person's answer. */
  consent(request: Request, form: URLSearchParams): Promise<Response> {
    return this.#completion.consent(request, form);
  }

  /** The consented authorization this person is connecting services for, if it is theirs. */
  awaitingServices(session: SsoSession, pendingId: string): Promise<AwaitingServices | undefined> {
    return this.#completion.awaitingServices(session, pendingId);
  }

  /** GET /oauth/complete: issues the code the services page held back, to its own person. */
  complete(request: Request): Promise<Response> {
    return this.#completion.complete(request);
  }

  /** GET /logout: a confirmation form. */
  logoutPage(request: Request): Promise<Response> {
    return this.#signOut.page(request);
  }

  /** POST /logout: ends the SSO session server-side and clears its cookie. */
  logout(request: Request, form: URLSearchParams): Promise<Response> {
    return this.#signOut.submit(request, form);
  }
}
