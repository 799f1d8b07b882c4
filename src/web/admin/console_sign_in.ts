/**
 * The console's own sign-in, for a console on a listener of its own (`admin.listen`): the same
 * company identity provider, but the browser comes back to `${admin.url}${path}/callback`
 * (registered at the provider), since the gateway's /oauth/callback and its SSO cookie live on
 * another origin. The login is bound to the browser by its own cookie, as at the main port.
 */
import type { Clock } from "../../core/clock.ts";
import type { Identity } from "../../core/identity.ts";
import type { IdentityProvider } from "../../idp/provider.ts";
import type { Logger } from "../../observability/logger.ts";
import type { Store } from "../../store/store.ts";
import type { CookiePolicy } from "../cookies.ts";
import { IdpRoundTrip } from "../idp_round_trip.ts";
import { LoginStates } from "../login_state.ts";

/** How long a person has to come back from the provider. */
const LOGIN_TTL_MS = 10 * 60_000;

export type ReturnedSignIn =
  | { ok: true; identity: Identity; returnTo?: string; clearCookie: string }
  | { ok: false; response: Response };

export interface ConsoleSignInDeps {
  idp: IdentityProvider;
  store: Store;
  clock: Clock;
  logger: Logger;
  /** Where the provider sends the browser back: the console's /callback. */
  callbackUri: string;
  cookies: CookiePolicy;
}

export class ConsoleSignIn {
  readonly #roundTrip: IdpRoundTrip;

  constructor(deps: ConsoleSignInDeps) {
    this.#roundTrip = new IdpRoundTrip({
      idp: deps.idp,
      logger: deps.logger,
      callbackUri: deps.callbackUri,
      states: new LoginStates({
        store: deps.store,
        clock: deps.clock,
        cookies: deps.cookies,
        // Apart from the gateway's own login cookie: browsers send both when the two share a
        // host name on different ports.
        cookieName: "gatehouse_console_login",
        ttlMs: LOGIN_TTL_MS,
      }),
    });
  }

  /** To the provider, then back to `returnTo` (a console path the console built). */
  start(returnTo: string): Promise<Response> {
    return this.#roundTrip.start({ returnTo });
  }

  /** GET …/callback: who signed in, and where they were going. */
  async returned(request: Request): Promise<ReturnedSignIn> {
    const check = await this.#roundTrip.check(request);
    if (!check.ok) return check;
    const outcome = await this.#roundTrip.finish(check.returned);
    if (!outcome.ok) return outcome;
    return {
      ok: true,
      identity: outcome.identity,
      returnTo: check.returned.login.returnTo,
      clearCookie: this.#roundTrip.clearCookie(),
    };
  }
}
