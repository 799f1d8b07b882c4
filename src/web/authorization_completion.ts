/**
 * Finishing an /authorize request once the person is known: the servers' own `access:` (a
 * server the person may not use gets no code, and the person a page saying why), consent
 * (asked once per client, remembered for the services it covered), the services step when a
 * service that acts as the person lacks their credential, and the authorization code sent to
 * the request's own redirect URI with its own state, PKCE challenge and audience. Only the
 * person who was asked may answer or complete a request.
 */
import type { Clock } from "../core/clock.ts";
import type { Identity } from "../core/identity.ts";
import type { AuthorizationRequest } from "../oauth/authorize.ts";
import { OAuthError, oauthErrorLocation, oauthErrorRedirect } from "../oauth/errors.ts";
import type { GrantStore } from "../oauth/grants.ts";
import type { CurrentIdentity } from "../oauth/token.ts";
import type { Logger } from "../observability/logger.ts";
import { KEYS } from "../store/keys.ts";
import type { Store } from "../store/store.ts";
import { accessRefusedPage, consentPage, errorPage } from "./pages.ts";
import type { PendingAuthorization, PendingAuthorizations } from "./pending_authorizations.ts";
import { redirect, withCookies } from "./redirects.ts";
import type { SsoSession, SsoSessions } from "./sso.ts";

export interface AuthorizationCompletionDeps {
  issuer: string;
  /** The issuer's path, without a trailing slash ("" at the root of the origin). */
  basePath: string;
  store: Store;
  clock: Clock;
  logger: Logger;
  grants: GrantStore;
  sso: SsoSessions;
  pending: PendingAuthorizations;
  /** Services among these audiences that act as the person and lack their credential. */
  credentialsMissing(audience: string[], user: string): Promise<string[]>;
  /** The first of these audiences whose server's `access:` refuses the person, and why. */
  checkServerAccess(identity: Identity, audience: string[]): ServerRefusal | undefined;
  /**
   * The person as the identity provider states them now when their groups are older than
   * `oauth.groupsMaxAge` (an SSO session outlives them); left out: as signed in.
   */
  currentIdentity?(identity: Identity): Promise<CurrentIdentity>;
}

/** A server the person may not use, and the sentence saying so. */
export interface ServerRefusal {
  server: string;
  reason: string;
}

/** An authorization waiting on the services page, as that page shows it. */
export interface AwaitingServices {
  id: string;
  clientName?: string;
  /** Server names the client will use. */
  services: string[];
}

interface ConsentRecord {
  audience: string[];
  grantedAt: number;
}

export class AuthorizationCompletion {
  constructor(private readonly deps: AuthorizationCompletionDeps) {}

  /**
   * Consent if this client is new to the person (or asks for more services), else the code
   * straight away. `cookies` are set on whichever answer it is (a new SSO session's, say).
   */
  async afterLogin(
    session: SsoSession,
    pendingId: string,
    pending: PendingAuthorization,
    cookies: string[],
  ): Promise<Response> {
    const { deps } = this;
    const { request } = pending;
    const refused = await this.#refusal(request, session.identity);
    if (refused) return withCookies(refused, cookies);
    const consent = await deps.store.get<ConsentRecord>(
      KEYS.consent(session.identity.subject, request.clientId),
    );
    if (consent && request.audience.every((uri) => consent.audience.includes(uri))) {
      return withCookies(await this.#proceed(pendingId, pending, session.identity), cookies);
    }
    await deps.pending.save(pendingId, { ...pending, subject: session.identity.subject });
    const page = await consentPage({
      person: session.identity.email ?? session.identity.name ?? session.identity.subject,
      clientName: request.clientName,
      clientId: request.clientId,
      redirectUri: request.redirectUri,
      services: this.#serverNames(request),
      requestId: pendingId,
      csrf: await deps.sso.csrfToken(session),
      action: `${deps.basePath}/authorize/consent`,
    });
    return withCookies(page, cookies);
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
    // Checked before taking it, so someone else's request id cannot be used to spoil it.
    const own = (await deps.pending.peek(pendingId))?.subject === session.identity.subject;
    const pending = own ? await deps.pending.take(pendingId) : undefined;
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
    await deps.pending.save(pendingId, { ...pending, subject: identity.subject, consented: true });
    return redirect(303, `${deps.basePath}/oauth/services?request=${pendingId}`);
  }

  /** The consented authorization this person is connecting services for, if it is theirs. */
  async awaitingServices(
    session: SsoSession,
    pendingId: string,
  ): Promise<AwaitingServices | undefined> {
    const pending = await this.deps.pending.peek(pendingId);
    if (!this.#ownConsented(pending, session)) return undefined;
    return {
      id: pendingId,
      clientName: pending!.request.clientName,
      services: this.#serverNames(pending!.request),
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
    const pending = this.#ownConsented(await deps.pending.peek(pendingId), session)
      ? await deps.pending.take(pendingId)
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

  /** Service URIs are `${issuer}/${server}`; pages name the servers. */
  #serverNames(request: AuthorizationRequest): string[] {
    return request.audience.map((uri) => uri.slice(this.deps.issuer.length + 1));
  }

  /**
   * The page refusing a server the person may not use (RFC 6749 §4.1.2.1's access_denied for
   * the client behind its link), or undefined when every requested server admits them.
   */
  async #refusal(
    request: AuthorizationRequest,
    identity: Identity,
  ): Promise<Response | undefined> {
    const { deps } = this;
    const refused = deps.checkServerAccess(identity, request.audience);
    if (!refused) return undefined;
    deps.logger.info("authorization refused by a server's access rules", {
      subject: identity.subject,
      server: refused.server,
      clientId: request.clientId,
    });
    return await accessRefusedPage({
      person: identity.email ?? identity.name ?? identity.subject,
      server: refused.server,
      requested: this.#serverNames(request),
      clientName: request.clientName,
      returnTo: oauthErrorLocation(
        request.redirectUri,
        new OAuthError("access_denied", refused.reason),
        request.state,
        deps.issuer,
      ),
    });
  }

  async #issueCode(request: AuthorizationRequest, signedIn: Identity): Promise<Response> {
    const { deps } = this;
    const current = await deps.currentIdentity?.(signedIn) ?? { ok: true, identity: signedIn };
    if (!current.ok) {
      return await errorPage(403, "Sign in again", `${current.reason}.`);
    }
    const { identity } = current;
    // Asked again here: the configuration may have been reloaded while the person consented.
    const refused = await this.#refusal(request, identity);
    if (refused) return refused;
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
    return redirect(302, location.href);
  }
}
