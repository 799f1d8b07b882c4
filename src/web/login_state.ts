/**
 * The state of one login round trip at the identity provider: the random `state` parameter,
 * the OIDC nonce, the PKCE verifier, and what the login is for. It is kept in the store under
 * the hash of `state` (a stolen database holds no usable state), taken at most once, and bound
 * to the browser that started it by a cookie whose hash it records.
 */
import type { Clock } from "../core/clock.ts";
import { sha256Base64Url } from "../crypto/base64url.ts";
import { matchesHash } from "../crypto/compare.ts";
import { randomBase64Url } from "../crypto/random.ts";
import { KEYS } from "../store/keys.ts";
import type { Store } from "../store/store.ts";
import { clearCookie, type CookiePolicy, readCookie, setCookie } from "./cookies.ts";

/** What a login is for: an /authorize request waiting for it, or a page of this gateway. */
export type LoginPurpose = { pendingId: string } | { returnTo: string };

export interface LoginState {
  /** The /authorize request this login serves; or, for a browser page, where to return. */
  pendingId?: string;
  returnTo?: string;
  nonce: string;
  codeVerifier: string;
  /** Hash of the login cookie: the callback must arrive in the browser that started it. */
  bindingHash: string;
  expiresAt: number;
}

/** A login just begun: what the identity provider is sent, and the cookie for the browser. */
export interface StartedLogin {
  state: string;
  login: LoginState;
  /** Set-Cookie header carrying the browser binding. */
  cookie: string;
}

/** The callback's state, taken: the login it names, or why there is none to continue. */
export type ReturningLogin =
  | { ok: true; state: string; login: LoginState }
  /** Unknown, already used, or past its lifetime. */
  | { ok: false; reason: "expired" }
  /** Live, but the browser returning is not the one that started it. */
  | { ok: false; reason: "elsewhere" };

export const LOGIN_COOKIE = "gatehouse_login";

export interface LoginStatesOptions {
  store: Store;
  clock: Clock;
  cookies: CookiePolicy;
  /** The cookie's name; LOGIN_COOKIE unless a second sign-in shares the host (the console's). */
  cookieName?: string;
  /** How long the person has to come back from the identity provider. */
  ttlMs: number;
}

export class LoginStates {
  readonly #name: string;

  constructor(private readonly options: LoginStatesOptions) {
    this.#name = options.cookieName ?? LOGIN_COOKIE;
  }

  /** Draws a fresh state, nonce, verifier and binding, and keeps the login until it returns. */
  async begin(purpose: LoginPurpose): Promise<StartedLogin> {
    const { store, clock, cookies, ttlMs } = this.options;
    const state = randomBase64Url(24);
    const binding = randomBase64Url(24);
    const codeVerifier = randomBase64Url(48);
    const login: LoginState = {
      ...purpose,
      nonce: randomBase64Url(24),
      codeVerifier,
      bindingHash: await sha256Base64Url(binding),
      expiresAt: clock.now() + ttlMs,
    };
    await store.set(KEYS.login(await sha256Base64Url(state)), login, login.expiresAt);
    return { state, login, cookie: setCookie(cookies, this.#name, binding, ttlMs / 1000) };
  }

  /**
   * Takes the login named by the callback's `state`. It is used up whatever follows, so a
   * replayed callback, or one carried to another browser, finds nothing the second time.
   */
  async returning(request: Request, state: string | null): Promise<ReturningLogin> {
    const { store, clock, cookies } = this.options;
    const login = state
      ? await store.consume<LoginState>(KEYS.login(await sha256Base64Url(state)))
      : undefined;
    if (!state || !login || login.expiresAt <= clock.now()) return { ok: false, reason: "expired" };
    const binding = readCookie(request.headers.get("cookie"), cookies, this.#name);
    const bound = binding !== undefined && await matchesHash(binding, login.bindingHash);
    if (!bound) return { ok: false, reason: "elsewhere" };
    return { ok: true, state, login };
  }

  /** Set-Cookie header removing the binding once the login is over. */
  clearCookie(): string {
    return clearCookie(this.options.cookies, this.#name);
  }
}
