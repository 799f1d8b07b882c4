import assert from "node:assert/strict";
import { testClock } from "../../../tests/fixtures/clock.ts";
import { openKvStore } from "../../store/kv.ts";
import {
  ADMIN_COOKIE,
  adminCookiePolicy,
  adminRefusal,
  AdminSessions,
  MAX_LIFE_MS,
} from "./admin_sessions.ts";

const OPS = { subject: "oidc:ops", email: "ops@example.com" };

async function sessions(baseUrl: string) {
  const clock = testClock();
  clock.freeze();
  const store = await openKvStore(":memory:", { clock });
  const key = await crypto.subtle.generateKey({ name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const admin = new AdminSessions({
    store,
    clock,
    idleMs: 30 * 60_000,
    cookies: adminCookiePolicy(baseUrl, "/admin"),
    csrfKey: key,
  });
  return { admin, clock, store };
}

function requestWith(cookie: string): Request {
  return new Request("https://gw.example.com/admin", {
    headers: { cookie: cookie.split(";")[0] },
  });
}

Deno.test("AdminSessions: over https the cookie is __Host- prefixed, Path=/, Secure, HttpOnly, SameSite=Lax", async () => {
  const { admin, store } = await sessions("https://gw.example.com/gw");
  try {
    const { cookie } = await admin.create(OPS);
    assert.match(cookie, new RegExp(`^__Host-${ADMIN_COOKIE}=[A-Za-z0-9_-]{43}; Path=/; `));
    for (const part of ["HttpOnly", "SameSite=Lax", "Secure"]) assert.ok(cookie.includes(part));
  } finally {
    store.close();
  }
});

Deno.test("AdminSessions: a session ends after the idle timeout, is kept alive by use, and ends after MAX_LIFE_MS", async () => {
  const { admin, clock, store } = await sessions("https://gw.example.com");
  try {
    const { cookie } = await admin.create(OPS);
    clock.advance(29 * 60_000);
    assert.ok(await admin.fromRequest(requestWith(cookie)));
    clock.advance(29 * 60_000);
    assert.ok(await admin.fromRequest(requestWith(cookie)), "used within the idle timeout");
    clock.advance(31 * 60_000);
    assert.equal(await admin.fromRequest(requestWith(cookie)), undefined, "idle too long");
    const busy = (await admin.create(OPS)).cookie;
    for (let used = 0; used < MAX_LIFE_MS; used += 20 * 60_000) {
      clock.advance(20 * 60_000);
      await admin.fromRequest(requestWith(busy));
    }
    assert.equal(await admin.fromRequest(requestWith(busy)), undefined, "past its whole life");
  } finally {
    store.close();
  }
});

Deno.test("AdminSessions: CSRF tokens are bound to one session", async () => {
  const { admin, store } = await sessions("https://gw.example.com");
  try {
    const one = (await admin.create(OPS)).session;
    const two = (await admin.create(OPS)).session;
    assert.ok(await admin.checkCsrf(one, await admin.csrfToken(one)));
    assert.equal(await admin.checkCsrf(one, await admin.csrfToken(two)), false);
    assert.equal(await admin.checkCsrf(one, ""), false);
  } finally {
    store.close();
  }
});

Deno.test("adminRefusal() admits listed verified addresses and listed groups, and says why not otherwise", () => {
  const admin = { emails: ["ops@example.com"], groups: ["platform-admins"] };
  assert.equal(adminRefusal(OPS, admin), undefined);
  assert.equal(adminRefusal({ subject: "x", email: "OPS@example.com" }, admin), undefined);
  assert.equal(adminRefusal({ subject: "x", groups: ["platform-admins"] }, admin), undefined);
  assert.match(
    adminRefusal({ ...OPS, emailVerified: false }, admin)!,
    /says ops@example\.com is not verified/,
  );
  assert.match(
    adminRefusal({ subject: "x", email: "bob@example.com", groups: ["eng"] }, admin)!,
    /bob@example\.com is not among[^]*\(eng\) is in admin\.groups/,
  );
});

Deno.test("AdminSessions: a sign-out on another replica between a touch's read and its write stays signed out", async () => {
  const { admin, clock, store } = await sessions("https://gw.example.com");
  try {
    const { cookie, session } = await admin.create(OPS);
    clock.advance(5 * 60_000);
    // The other replica's sign-out lands just after this one read the record to touch it.
    let signOut: (() => Promise<unknown>) | undefined = () => admin.end(session);
    const racing = new AdminSessions({
      clock,
      idleMs: 30 * 60_000,
      cookies: adminCookiePolicy("https://gw.example.com", "/admin"),
      csrfKey: await crypto.subtle.generateKey({ name: "HMAC", hash: "SHA-256" }, false, ["sign"]),
      store: {
        get: async (key) => {
          const value = await store.get(key);
          await signOut?.();
          signOut = undefined;
          return value;
        },
        getEntry: async (key) => {
          const entry = await store.getEntry(key);
          await signOut?.();
          signOut = undefined;
          return entry;
        },
        set: (key, value, expiresAt) => store.set(key, value, expiresAt),
        commitIfUnchanged: (checks, changes) => store.commitIfUnchanged(checks, changes),
        delete: (key) => store.delete(key),
      } as typeof store,
    });
    await racing.fromRequest(requestWith(cookie));
    assert.equal(signOut, undefined, "the sign-out ran");
    assert.equal(await admin.fromRequest(requestWith(cookie)), undefined, "still signed out");
  } finally {
    store.close();
  }
});
