/**
 * Rate limits as callers meet them: 429 with Retry-After, per person on MCP endpoints, per
 * address on registration and the sign-in pages, per proven client and per address's failures
 * on the token endpoint.
 */
import assert from "node:assert/strict";
import { testClock } from "./fixtures/clock.ts";
import { REDIRECT_URI } from "./fixtures/oauth_client.ts";
import { startOAuthGateway } from "./fixtures/oauth_gateway.ts";
import {
  exchangeCode,
  obtainCode,
  register,
  registerClient,
  token,
  VERIFIER,
} from "./fixtures/oauth_raw.ts";
import { INIT, mcpHeaders, post } from "./fixtures/raw.ts";
import { UserAgent } from "./fixtures/user_agent.ts";

/**
 * The limits' buckets refill with the gateway's clock, stopped here: however slowly a loaded
 * machine sends the requests, none refills in between and Retry-After is exact.
 */
const frozen = () => {
  const clock = testClock();
  clock.freeze();
  return { clock };
};

const LIMITS = `rateLimits:
  mcpPerUser: 3/min
  registerPerAddress: 2/hour
  tokenPerClient: 2/min
  oauthPerAddress: 4/min
`;

Deno.test("MCP requests over mcpPerUser get 429 with Retry-After; other people are not slowed", async () => {
  const setup = await startOAuthGateway(LIMITS, "", frozen());
  try {
    const url = `${setup.url}/shared/mcp`;
    const alice = mcpHeaders({ authorization: "Bearer static-shared-token-0123456789" });
    for (let i = 0; i < 3; i++) assert.equal((await post(url, INIT, alice)).status, 200);
    const limited = await post(url, INIT, alice);
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get("retry-after"), "20");
    assert.deepEqual(limited.json, {
      error: "rate_limited",
      error_description: "too many requests; try again in 20 s (limit: rateLimits.mcpPerUser)",
    });
    // Someone else (no token at all here) is answered as before: 401, not 429.
    assert.equal((await post(url, INIT)).status, 401);
  } finally {
    await setup.close();
  }
});

Deno.test("registration over registerPerAddress and an authenticated client's token requests over tokenPerClient get 429", async () => {
  const setup = await startOAuthGateway(LIMITS, "", frozen());
  try {
    assert.equal((await register(setup.url)).status, 201);
    // A client secret proves the client at once, so even its failing requests are its own.
    const confidential = await register(setup.url, {
      token_endpoint_auth_method: "client_secret_post",
    });
    assert.equal(confidential.status, 201);
    const third = await fetch(`${setup.url}/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(third.status, 429);
    assert.equal(third.headers.get("retry-after"), "1800");
    assert.equal(third.headers.get("access-control-allow-origin"), "*");
    assert.deepEqual(await third.json(), {
      error: "temporarily_unavailable",
      error_description:
        "too many requests; try again in 1800 s (limit: rateLimits.registerPerAddress)",
    });

    const form = {
      grant_type: "authorization_code",
      client_id: confidential.json.client_id,
      client_secret: confidential.json.client_secret,
      code: "x",
      redirect_uri: REDIRECT_URI,
      code_verifier: VERIFIER,
    };
    assert.equal((await token(setup.url, form)).status, 400);
    assert.equal((await token(setup.url, form)).status, 400);
    const limited = await token(setup.url, form);
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get("retry-after"), "30");
    assert.deepEqual(limited.json, {
      error: "temporarily_unavailable",
      error_description: "too many requests; try again in 30 s (limit: rateLimits.tokenPerClient)",
    });
  } finally {
    await setup.close();
  }
});

Deno.test("a stranger's bad token requests naming a client do not lock it out, and an address's failures past tokenFailuresPerAddress get 429", async () => {
  const clock = testClock();
  clock.freeze();
  const setup = await startOAuthGateway(
    `rateLimits:
  tokenPerClient: 2/min
  tokenFailuresPerAddress: 5/min
`,
    "",
    { clock },
  );
  try {
    const client = await registerClient(setup.url);
    // The stranger's requests reach the gateway in-process, from an address of their own.
    const fromStranger = async (form: Record<string, string>) => {
      const response = await setup.gw.gateway.fetch(
        new Request(`${setup.url}/token`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams(form),
        }),
        { remoteAddr: { hostname: "203.0.113.7" } },
      );
      return { status: response.status, headers: response.headers, json: await response.json() };
    };
    const guesses = [0, 1, 2, 3, 4, 5].map((i): Record<string, string> =>
      i % 2
        ? { grant_type: "refresh_token", client_id: client.client_id, refresh_token: `guess-${i}` }
        : {
          grant_type: "authorization_code",
          client_id: client.client_id,
          code: `guess-${i}`,
          redirect_uri: REDIRECT_URI,
          code_verifier: VERIFIER,
        }
    );
    // More bad requests with the client's id than tokenPerClient allows: each is refused for
    // what it is, none is charged to the client.
    for (const guess of guesses.slice(0, 5)) {
      const answer = await fromStranger(guess);
      assert.equal(answer.status, 400, JSON.stringify(answer.json));
      assert.equal(answer.json.error, "invalid_grant");
    }
    const throttled = await fromStranger(guesses[5]);
    assert.equal(throttled.status, 429);
    assert.equal(throttled.headers.get("retry-after"), "12");
    assert.deepEqual(throttled.json, {
      error: "temporarily_unavailable",
      error_description:
        "too many requests; try again in 12 s (limit: rateLimits.tokenFailuresPerAddress)",
    });

    // The client, from its own address, signs in and refreshes as if nothing had happened.
    const alpha = `${setup.url}/alpha`;
    const code = (await obtainCode(new UserAgent(), setup.url, client.client_id, alpha))
      .get("code")!;
    const issued = await exchangeCode(setup.url, client.client_id, code);
    assert.equal(issued.status, 200, JSON.stringify(issued.json));
    const refresh = (refreshToken: string) =>
      token(setup.url, {
        grant_type: "refresh_token",
        client_id: client.client_id,
        refresh_token: refreshToken,
      });
    const refreshed = await refresh(issued.json.refresh_token);
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.json));

    // Its own proven requests still count: the third within the minute waits, and its refresh
    // token, not used up by the refusal, works once the bucket has refilled.
    const limited = await refresh(refreshed.json.refresh_token);
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get("retry-after"), "30");
    assert.equal(
      limited.json.error_description,
      "too many requests; try again in 30 s (limit: rateLimits.tokenPerClient)",
    );
    clock.advance(30_000);
    assert.equal((await refresh(refreshed.json.refresh_token)).status, 200);
  } finally {
    await setup.close();
  }
});

Deno.test("sign-in pages over oauthPerAddress get a 429 page with Retry-After", async () => {
  const setup = await startOAuthGateway(LIMITS, "", frozen());
  try {
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 5; i++) {
      last = await fetch(`${setup.url}/authorize?client_id=nobody`, { redirect: "manual" });
      statuses.push(last.status);
      if (i < 4) await last.body?.cancel();
    }
    assert.deepEqual(statuses, [400, 400, 400, 400, 429]);
    assert.equal(last!.headers.get("retry-after"), "15");
    assert.match(last!.headers.get("content-type")!, /text\/html/);
    assert.match(await last!.text(), /Too many requests[^]*Wait 15 seconds/);
  } finally {
    await setup.close();
  }
});

Deno.test("an address that spends its /authorize budget still reaches the token endpoint, the callbacks and its own pages", async () => {
  const setup = await startOAuthGateway(LIMITS, "", frozen());
  try {
    for (let i = 0; i < 4; i++) {
      const page = await fetch(`${setup.url}/authorize?client_id=nobody`);
      await page.body?.cancel();
    }
    const spent = await fetch(`${setup.url}/authorize?client_id=nobody`);
    await spent.body?.cancel();
    assert.equal(spent.status, 429);
    // Each answers as it would without the /authorize requests: none is 429.
    const tokenAnswer = await token(setup.url, { grant_type: "authorization_code" });
    assert.equal(tokenAnswer.json.error, "invalid_client", JSON.stringify(tokenAnswer.json));
    for (const path of ["/oauth/callback?state=x", "/my/access", "/my/tokens"]) {
      const response = await fetch(`${setup.url}${path}`, { redirect: "manual" });
      await response.body?.cancel();
      assert.notEqual(response.status, 429, path);
    }
  } finally {
    await setup.close();
  }
});
