/**
 * The console's own session: opened from a company sign-in (the SSO session) of a person the
 * `admin:` list names, kept server-side under the hash of a random cookie value, ended after
 * `admin.idleTimeout` unused and after MAX_LIFE_MS in any case. Its cookie is `__Host-`
 * prefixed over https (Path=/, Secure), HttpOnly and SameSite=Lax; its CSRF tokens are bound
 * to it alone.
 */
import type { Clock } from "../../core/clock.ts";
import type { Identity } from "../../core/identity.ts";
import { sha256Base64Url } from "../../crypto/base64url.ts";
import { randomBase64Url } from "../../crypto/random.ts";
import { KEYS } from "../../store/keys.ts";
import type { Store } from "../../store/store.ts";
import { clearCookie, type CookiePolicy, readCookie, setCookie } from "../cookies.ts";
import { checkCsrfFor, csrfTokenFor } from "../csrf.ts";

export const ADMIN_COOKIE = "gatehouse_admin";
/** However busy, a console session is signed in again after this long. */
export const MAX_LIFE_MS = 12 * 60 * 60_000;
/** The idle deadline is moved on at most this often, so reading pages rarely writes. */
const TOUCH_EVERY_MS = 60_000;
const PURPOSE = "admin";

export interface AdminSession {
  /** The cookie value; never stored. */
  id: string;
  identity: Identity;
  createdAt: number;
  touchedAt: number;
  expiresAt: number;
}

type AdminRecord = Omit<AdminSession, "id">;

export interface AdminSessionOptions {
  store: Store;
  clock: Clock;
  idleMs: number;
  cookies: CookiePolicy;
  csrfKey: CryptoKey;
}

/** The cookie policy of the console: `__Host-` (Path=/) over https, its own path otherwise. */
export function adminCookiePolicy(baseUrl: string, consolePath: string): CookiePolicy {
  const url = new URL(baseUrl);
  const secure = url.protocol === "https:";
  const base = url.pathname.replace(/\/$/, "");
  return { secure, path: secure ? "/" : `${base}${consolePath}` };
}

export class AdminSessions {
  constructor(private readonly options: AdminSessionOptions) {}

  async create(identity: Identity): Promise<{ session: AdminSession; cookie: string }> {
    const { store, clock, idleMs, cookies } = this.options;
    const id = randomBase64Url(32);
    const now = clock.now();
    const record: AdminRecord = {
      identity,
      createdAt: now,
      touchedAt: now,
      expiresAt: now + idleMs,
    };
    await store.set(KEYS.adminSession(await sha256Base64Url(id)), record, record.expiresAt);
    return {
      session: { id, ...record },
      cookie: setCookie(cookies, ADMIN_COOKIE, id, MAX_LIFE_MS / 1000),
    };
  }

  /** The live session of the request's cookie; its idle deadline moves on as it is used. */
  async fromRequest(request: Request): Promise<AdminSession | undefined> {
    const { store, clock, idleMs, cookies } = this.options;
    const id = readCookie(request.headers.get("cookie"), cookies, ADMIN_COOKIE);
    if (!id) return undefined;
    const key = KEYS.adminSession(await sha256Base64Url(id));
    const entry = await store.getEntry<AdminRecord>(key);
    const record = entry.value;
    const now = clock.now();
    if (!record || record.expiresAt <= now || record.createdAt + MAX_LIFE_MS <= now) {
      return undefined;
    }
    if (now - record.touchedAt >= TOUCH_EVERY_MS) {
      record.touchedAt = now;
      record.expiresAt = Math.min(now + idleMs, record.createdAt + MAX_LIFE_MS);
      // Only over the record as read: a sign-out on another replica meanwhile stays one (a plain
      // write would bring the session back), and a touch there meanwhile is as good as this one.
      const touched = await store.commitIfUnchanged([entry], {
        writes: [{ key, value: record, expiresAt: record.expiresAt }],
      });
      if (!touched && (await store.get<AdminRecord>(key)) === undefined) return undefined;
    }
    return { id, ...record };
  }

  /** Keeps `identity` as the session's person, read again from the provider (groupsMaxAge). */
  async describe(session: AdminSession, identity: Identity): Promise<void> {
    const { id: _id, ...record } = session;
    const key = KEYS.adminSession(await sha256Base64Url(session.id));
    await this.options.store.set(key, { ...record, identity }, record.expiresAt);
  }

  async end(session: AdminSession): Promise<string> {
    await this.options.store.delete(KEYS.adminSession(await sha256Base64Url(session.id)));
    return clearCookie(this.options.cookies, ADMIN_COOKIE);
  }

  csrfToken(session: AdminSession): Promise<string> {
    return csrfTokenFor(this.options.csrfKey, session.id, PURPOSE);
  }

  checkCsrf(session: AdminSession, given: string | null | undefined): Promise<boolean> {
    return checkCsrfFor(this.options.csrfKey, session.id, given, PURPOSE);
  }
}

/** Why `identity` may not open the console; undefined when it may. */
export function adminRefusal(
  identity: Identity,
  admin: { emails: readonly string[]; groups: readonly string[] },
): string | undefined {
  const email = identity.email?.toLowerCase();
  if (email && identity.emailVerified !== false && admin.emails.includes(email)) return undefined;
  const groups = identity.groups ?? [];
  if (groups.some((group) => admin.groups.includes(group))) return undefined;
  const who = identity.email ?? identity.subject;
  const reasons: string[] = [];
  if (email && identity.emailVerified === false) {
    reasons.push(`the identity provider says ${who} is not verified`);
  } else reasons.push(`${who} is not among the console's administrators (admin.emails)`);
  reasons.push(
    groups.length
      ? `none of the groups of this sign-in (${groups.join(", ")}) is in admin.groups`
      : "this sign-in carries no group that admin.groups names",
  );
  return `${reasons.join(", and ")}.`;
}
