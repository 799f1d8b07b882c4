import assert from "node:assert/strict";
import { testClock } from "../../tests/fixtures/clock.ts";
import {
  CALLBACK,
  ELSEWHERE,
  EXPIRED,
  IDP,
  ScriptedIdp,
  shown,
} from "../../tests/fixtures/login_flow.ts";
import { s256Challenge } from "../crypto/pkce.ts";
import { IdpError } from "../idp/provider.ts";
import { createLogger } from "../observability/logger.ts";
import { openKvStore } from "../store/kv.ts";
import { cookiePolicy } from "./cookies.ts";
import { IdpRoundTrip } from "./idp_round_trip.ts";
import { LoginStates } from "./login_state.ts";

interface Parts {
  trip: IdpRoundTrip;
  idp: ScriptedIdp;
  logs: string[];
}

async function withRoundTrip(test: (parts: Parts) => Promise<void>): Promise<void> {
  const clock = testClock();
  clock.freeze();
  const store = await openKvStore(":memory:");
  const logs: string[] = [];
  const idp = new ScriptedIdp();
  const states = new LoginStates({
    store,
    clock,
    cookies: cookiePolicy("https://gw.example.com"),
    ttlMs: 10 * 60_000,
  });
  const logger = createLogger("debug", (line) => logs.push(line));
  try {
    await test({
      trip: new IdpRoundTrip({ idp, logger, states, callbackUri: CALLBACK }),
      idp,
      logs,
    });
  } finally {
    store.close();
  }
}

/** The provider's callback for `started` (the gateway's redirect to it), by default from the same browser. */
function returnFrom(started: Response, cookie = cookieOf(started)): Request {
  const state = new URL(started.headers.get("location")!).searchParams.get("state")!;
  return new Request(`${CALLBACK}?code=idp-code&state=${state}`, { headers: { cookie } });
}

const cookieOf = (response: Response) => response.headers.get("set-cookie")!.split(";")[0];

Deno.test("start() sends the browser to the provider with a fresh state, nonce and S256 challenge of the verifier it keeps", async () => {
  await withRoundTrip(async ({ trip, idp }) => {
    const first = await trip.start({ returnTo: "/my/tokens" });
    const second = await trip.start({ returnTo: "/my/tokens" });
    for (const response of [first, second]) {
      assert.equal(response.status, 302);
      assert.equal(response.headers.get("cache-control"), "no-store");
      assert.match(response.headers.get("location")!, new RegExp(`^${IDP}\\?state=`));
    }
    const starts = [...idp.started.values()];
    assert.equal(starts.length, 2);
    assert.notEqual(starts[0].state, starts[1].state);
    assert.notEqual(starts[0].nonce, starts[1].nonce);
    assert.notEqual(starts[0].codeChallenge, starts[1].codeChallenge);
    assert.notEqual(cookieOf(first), cookieOf(second));
    const check = await trip.check(returnFrom(first));
    assert.ok(check.ok);
    assert.equal(starts[0].redirectUri, CALLBACK);
    assert.equal(check.returned.login.nonce, starts[0].nonce);
    assert.equal(await s256Challenge(check.returned.login.codeVerifier), starts[0].codeChallenge);
  });
});

Deno.test("start() shows a generic 502 page, and logs the cause, when the provider cannot be reached", async () => {
  await withRoundTrip(async ({ trip, idp, logs }) => {
    idp.unreachable = new Error(
      "error sending request for url (https://login.corp.internal:8443/.well-known/openid-configuration)",
    );
    const response = await trip.start({ returnTo: "/my/tokens" });
    const body = await response.clone().text();
    assert.deepEqual(await shown(response), {
      status: 502,
      title: "Sign-in is unavailable",
      text: "The company identity provider could not be reached. Try again in a minute.",
    });
    assert.ok(!body.includes("login.corp.internal"));
    assert.equal(response.headers.get("set-cookie"), null);
    const logged = JSON.parse(logs.find((line) => line.includes('"error"'))!);
    assert.equal(logged.msg, "identity provider unavailable");
    assert.match(logged.error.message, /login\.corp\.internal/);
  });
});

Deno.test("check() shows the expired page for a missing, unknown or used state", async () => {
  await withRoundTrip(async ({ trip }) => {
    const started = await trip.start({ returnTo: "/my/tokens" });
    const cookie = cookieOf(started);
    const requests = [
      new Request(`${CALLBACK}?code=idp-code`, { headers: { cookie } }),
      new Request(`${CALLBACK}?code=idp-code&state=${"x".repeat(32)}`, { headers: { cookie } }),
    ];
    for (const request of requests) {
      const check = await trip.check(request);
      assert.ok(!check.ok);
      assert.deepEqual(await shown(check.response), EXPIRED);
    }
    assert.ok((await trip.check(returnFrom(started))).ok);
    const again = await trip.check(returnFrom(started));
    assert.ok(!again.ok);
    assert.deepEqual(await shown(again.response), EXPIRED);
  });
});

Deno.test("check() shows the started-elsewhere page for a state returning without its browser's cookie", async () => {
  await withRoundTrip(async ({ trip }) => {
    const mine = await trip.start({ returnTo: "/my/tokens" });
    const theirs = await trip.start({ returnTo: "/my/tokens" });
    const check = await trip.check(returnFrom(mine, cookieOf(theirs)));
    assert.ok(!check.ok);
    assert.deepEqual(await shown(check.response), ELSEWHERE);
  });
});

Deno.test("finish() shows the provider's message with 403 for a refused login and 502 otherwise, logging only the reason", async () => {
  await withRoundTrip(async ({ trip, idp, logs }) => {
    const statuses = {
      login_refused: 403,
      provider_error: 502,
      invalid_response: 502,
      unreachable: 502,
    };
    for (const [code, status] of Object.entries(statuses)) {
      const check = await trip.check(returnFrom(await trip.start({ returnTo: "/my/tokens" })));
      assert.ok(check.ok);
      idp.failure = new IdpError(code as keyof typeof statuses, `Sign-in failed (${code}).`);
      logs.length = 0;
      const outcome = await trip.finish(check.returned);
      assert.ok(!outcome.ok);
      assert.deepEqual(await shown(outcome.response), {
        status,
        title: "Sign-in did not complete",
        text: `Sign-in failed (${code}).`,
      });
      assert.deepEqual(
        logs.map((line) => JSON.parse(line)).map(({ msg, reason }) => ({ msg, reason })),
        [
          { msg: "login failed at the identity provider", reason: code },
        ],
      );
    }
  });
});

Deno.test("finish() throws an error that is not an IdpError on to the error handler", async () => {
  await withRoundTrip(async ({ trip, idp }) => {
    const check = await trip.check(returnFrom(await trip.start({ returnTo: "/my/tokens" })));
    assert.ok(check.ok);
    idp.failure = new TypeError("cannot read properties of undefined (reading 'sub')");
    await assert.rejects(trip.finish(check.returned), TypeError);
  });
});

Deno.test("finish() returns who logged in when the provider accepts the callback", async () => {
  await withRoundTrip(async ({ trip, idp }) => {
    const check = await trip.check(returnFrom(await trip.start({ returnTo: "/my/tokens" })));
    assert.ok(check.ok);
    assert.deepEqual(await trip.finish(check.returned), {
      ok: true,
      identity: idp.identity,
      tokens: idp.tokens,
    });
    assert.equal(idp.finished[0].callbackUrl.searchParams.get("code"), "idp-code");
  });
});
