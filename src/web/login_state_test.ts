import assert from "node:assert/strict";
import { type TestClock, testClock } from "../../tests/fixtures/clock.ts";
import { sha256Base64Url } from "../crypto/base64url.ts";
import { KEYS } from "../store/keys.ts";
import { openKvStore } from "../store/kv.ts";
import type { Store } from "../store/store.ts";
import { cookiePolicy } from "./cookies.ts";
import { LoginStates } from "./login_state.ts";

const TTL_MS = 10 * 60_000;

async function withStates(
  test: (states: LoginStates, parts: { store: Store; clock: TestClock }) => Promise<void>,
): Promise<void> {
  const clock = testClock();
  clock.freeze();
  const store = await openKvStore(":memory:");
  try {
    const cookies = cookiePolicy("https://gw.example.com");
    await test(new LoginStates({ store, clock, cookies, ttlMs: TTL_MS }), { store, clock });
  } finally {
    store.close();
  }
}

/** A callback request from a browser sending this Cookie header (none when undefined). */
function callback(cookie: string | undefined): Request {
  return new Request("https://gw.example.com/oauth/callback", {
    headers: cookie ? { cookie } : {},
  });
}

/** The Cookie header a browser sends back for a Set-Cookie header. */
const sentBack = (setCookie: string) => setCookie.split(";")[0];

Deno.test("begin() keeps the login under the hash of its state, with the binding cookie's hash", async () => {
  await withStates(async (states, { store, clock }) => {
    const started = await states.begin({ pendingId: "p".repeat(32) });
    assert.equal(await store.get(KEYS.login(started.state)), undefined);
    const kept = await store.get(KEYS.login(await sha256Base64Url(started.state)));
    const binding = sentBack(started.cookie).split("=")[1];
    assert.deepEqual(kept, {
      pendingId: "p".repeat(32),
      nonce: started.login.nonce,
      codeVerifier: started.login.codeVerifier,
      bindingHash: await sha256Base64Url(binding),
      expiresAt: clock.now() + TTL_MS,
    });
    assert.match(started.login.codeVerifier, /^[A-Za-z0-9_-]{64}$/);
    assert.equal(
      started.cookie,
      `__Host-gatehouse_login=${binding}; Path=/; Max-Age=600; HttpOnly; SameSite=Lax; Secure`,
    );
  });
});

Deno.test("returning() gives the login once, then reports it expired", async () => {
  await withStates(async (states) => {
    const started = await states.begin({ returnTo: "/my/tokens" });
    const request = callback(sentBack(started.cookie));
    assert.deepEqual(await states.returning(request, started.state), {
      ok: true,
      state: started.state,
      login: started.login,
    });
    assert.deepEqual(await states.returning(request, started.state), {
      ok: false,
      reason: "expired",
    });
  });
});

Deno.test("returning() reports a login back in another browser as elsewhere, and spends it", async () => {
  await withStates(async (states) => {
    const mine = await states.begin({ returnTo: "/my/tokens" });
    const theirs = await states.begin({ returnTo: "/my/tokens" });
    for (const cookie of [sentBack(theirs.cookie), undefined, "__Host-gatehouse_login=short"]) {
      const fresh = await states.begin({ returnTo: "/my/tokens" });
      assert.deepEqual(await states.returning(callback(cookie), fresh.state), {
        ok: false,
        reason: "elsewhere",
      });
    }
    assert.deepEqual(await states.returning(callback(sentBack(theirs.cookie)), mine.state), {
      ok: false,
      reason: "elsewhere",
    });
    assert.deepEqual(await states.returning(callback(sentBack(mine.cookie)), mine.state), {
      ok: false,
      reason: "expired",
    });
  });
});

Deno.test("returning() reports a login expired once its lifetime has passed on the clock", async () => {
  await withStates(async (states, { clock }) => {
    const inTime = await states.begin({ returnTo: "/my/tokens" });
    const late = await states.begin({ returnTo: "/my/tokens" });
    clock.advance(TTL_MS - 1);
    const first = await states.returning(callback(sentBack(inTime.cookie)), inTime.state);
    assert.equal(first.ok, true);
    clock.advance(1);
    assert.deepEqual(await states.returning(callback(sentBack(late.cookie)), late.state), {
      ok: false,
      reason: "expired",
    });
  });
});

Deno.test("returning() reports a missing state as expired", async () => {
  await withStates(async (states) => {
    const started = await states.begin({ returnTo: "/my/tokens" });
    assert.deepEqual(await states.returning(callback(sentBack(started.cookie)), null), {
      ok: false,
      reason: "expired",
    });
    assert.deepEqual(await states.returning(callback(sentBack(started.cookie)), ""), {
      ok: false,
      reason: "expired",
    });
  });
});

Deno.test("clearCookie() empties the login cookie at once", async () => {
  await withStates((states) => {
    assert.equal(
      states.clearCookie(),
      "__Host-gatehouse_login=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax; Secure",
    );
    return Promise.resolve();
  });
});
