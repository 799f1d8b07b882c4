/**
 * The browser's single sign-on session: a random id in an HttpOnly cookie, the record kept
 * server-side under the id's hash, so it can be revoked and a stolen database holds no cookie.
 * CSRF tokens are an HMAC of the session id under the CSRF key: bound to this session only.
 */
import type { Clock } from "../core/clock.ts";
import type { Identity } from "../core/identity.ts";
import { sha256Base64Url } from "../crypto/base64url.ts";
import { randomBase64Url } from "../crypto/random.ts";
import { KEYS } from "../store/keys.ts";
import type { Store } from "../store/store.ts";
import { checkCsrfFor, csrfTokenFor } from "./csrf.ts";
import { clearCookie, type CookiePolicy, readCookie, setCookie } from "./cookies.ts";

export const SSO_COOKIE = "gatehouse_sso";

export interface SsoSession {
  /** The cookie value; never stored. */
  id: string;
  identity: Identity;
  createdAt: number;
  expiresAt: number;
}

interface SsoRecord {
  identity: Identity;
  createdAt: number;
  expiresAt: number;
}

export class SsoSessions {
  constructor(
    private readonly options: {
      store: Store;
      clock: Clock;
      ttlMs: number;
      cookies: CookiePolicy;
      csrfKey: CryptoKey;
    },
  ) {}

  /** Starts a session; returns it and the Set-Cookie header that carries it. */
  async create(identity: Identity): Promise<{ session: SsoSession; cookie: string }> {
    const { store, clock, ttlMs, cookies } = this.options;
    const id = randomBase64Url(32);
    const now = clock.now();
    const record: SsoRecord = { identity, createdAt: now, expiresAt: now + ttlMs };
    await store.set(KEYS.ssoSession(await sha256Base64Url(id)), record, record.expiresAt);
    return {
      session: { id, ...record },
      cookie: setCookie(cookies, SSO_COOKIE, id, ttlMs / 1000),
    };
  }

  /** The live session named by the request's cookie, if any. */
  async fromRequest(request: Request): Promise<SsoSession | undefined> {
    const id = readCookie(request.headers.get("cookie"), this.options.cookies, SSO_COOKIE);
    if (!id) return undefined;
    const record = await this.options.store.get<SsoRecord>(
      KEYS.ssoSession(await sha256Base64Url(id)),
    );
    if (!record || record.expiresAt <= this.options.clock.now()) return undefined;
    return { id, ...record };
  }

  /** Keeps `identity` as the session's person, read again from the provider (groupsMaxAge). */
  async describe(session: SsoSession, identity: Identity): Promise<void> {
    const record: SsoRecord = {
      identity,
      createdAt: session.createdAt,
      expiresAt: session.expiresAt,
    };
    await this.options.store.set(
      KEYS.ssoSession(await sha256Base64Url(session.id)),
      record,
      record.expiresAt,
    );
  }

  /** Ends the session server-side; returns the Set-Cookie header that clears it. */
  async end(session: SsoSession): Promise<string> {
    await this.options.store.delete(KEYS.ssoSession(await sha256Base64Url(session.id)));
    return clearCookie(this.options.cookies, SSO_COOKIE);
  }

  csrfToken(session: SsoSession): Promise<string> {
    return csrfTokenFor(this.options.csrfKey, session.id);
  }

  checkCsrf(session: SsoSession, given: string | null | undefined): Promise<boolean> {
    return checkCsrfFor(this.options.csrfKey, session.id, given);
  }
}
