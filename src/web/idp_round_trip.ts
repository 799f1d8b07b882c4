/**
 * The round trip to the company identity provider: send the browser there with a fresh state,
 * nonce and PKCE challenge; check the callback that brings it back (state single use, in time,
 * in the same browser); exchange the callback's code for who logged in. What goes wrong is a
 * page the person can act on; the provider's internals go to the log, never to the page.
 */
import type { Identity } from "../core/identity.ts";
import type { IdpTokens } from "../core/idp_tokens.ts";
import { s256Challenge } from "../crypto/pkce.ts";
import { type IdentityProvider, IdpError } from "../idp/provider.ts";
import type { Logger } from "../observability/logger.ts";
import type { LoginPurpose, LoginState, LoginStates } from "./login_state.ts";
import { errorPage } from "./pages.ts";
import { redirect } from "./redirects.ts";

export interface IdpRoundTripDeps {
  idp: IdentityProvider;
  logger: Logger;
  states: LoginStates;
  /** This gateway's /oauth/callback, registered at the provider. */
  callbackUri: string;
}

/** A callback whose state checked out, before its code is exchanged. */
export interface ReturnedLogin {
  callbackUrl: URL;
  state: string;
  login: LoginState;
}

export type CallbackCheck = { ok: true; returned: ReturnedLogin } | {
  ok: false;
  response: Response;
};

export type LoginOutcome = { ok: true; identity: Identity; tokens: IdpTokens } | {
  ok: false;
  response: Response;
};

export class IdpRoundTrip {
  constructor(private readonly deps: IdpRoundTripDeps) {}

  /** Sends the browser to the provider, carrying the cookie that binds the login to it. */
  async start(purpose: LoginPurpose): Promise<Response> {
    const { deps } = this;
    const started = await deps.states.begin(purpose);
    let location: URL;
    try {
      location = await deps.idp.authorizationUrl({
        state: started.state,
        nonce: started.login.nonce,
        codeChallenge: await s256Challenge(started.login.codeVerifier),
        redirectUri: deps.callbackUri,
      });
    } catch (error) {
      deps.logger.error("identity provider unavailable", { error });
      return await errorPage(
        502,
        "Sign-in is unavailable",
        "The company identity provider could not be reached. Try again in a minute.",
      );
    }
    return redirect(302, location.href, [started.cookie]);
  }

  /** Set-Cookie header removing the browser binding once the login is over. */
  clearCookie(): string {
    return this.deps.states.clearCookie();
  }

  /** GET /oauth/callback, first half: the login this callback returns from, if it may go on. */
  async check(request: Request): Promise<CallbackCheck> {
    const callbackUrl = new URL(request.url);
    const taken = await this.deps.states.returning(
      request,
      callbackUrl.searchParams.get("state"),
    );
    if (taken.ok) {
      return { ok: true, returned: { callbackUrl, state: taken.state, login: taken.login } };
    }
    if (taken.reason === "expired") {
      return {
        ok: false,
        response: await errorPage(
          400,
          "This sign-in has expired",
          "It took too long, or it was already completed. Start again from your application.",
        ),
      };
    }
    return {
      ok: false,
      response: await errorPage(
        400,
        "This sign-in was started elsewhere",
        "The sign-in began in another browser or its cookie was lost. Start again from your application, in this browser.",
      ),
    };
  }

  /**
   * GET /oauth/callback, second half: the provider's answer. An `IdpError` carries a message
   * written for the person; anything else is a fault of ours and is thrown to the error handler.
   */
  async finish(returned: ReturnedLogin): Promise<LoginOutcome> {
    const { deps } = this;
    try {
      const signedIn = await deps.idp.completeLogin({
        callbackUrl: returned.callbackUrl,
        state: returned.state,
        nonce: returned.login.nonce,
        codeVerifier: returned.login.codeVerifier,
        redirectUri: deps.callbackUri,
      });
      return { ok: true, identity: signedIn.identity, tokens: signedIn.tokens };
    } catch (error) {
      if (!(error instanceof IdpError)) throw error;
      deps.logger.warn("login failed at the identity provider", { reason: error.code });
      return {
        ok: false,
        response: await errorPage(
          error.code === "login_refused" ? 403 : 502,
          "Sign-in did not complete",
          error.message,
        ),
      };
    }
  }
}
