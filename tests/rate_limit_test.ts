/**
 * Rate limits as callers meet them: 429 with Retry-After, per person on MCP endpoints, per
 * address on registration and the sign-in pages, per client on the token endpoint.
 */
import assert from "node:assert/strict";
import { testClock } from "./fixtures/clock.ts";
import { startOAuthGateway } from "./fixtures/oauth_gateway.ts";
import { register, token } from "./fixtures/oauth_raw.ts";
import { INIT, mcpHeaders, post } from "./fixtures/raw.ts";

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

Deno.test("registration over registerPerAddress and token requests over tokenPerClient get 429", async () => {
  const setup = await startOAuthGateway(LIMITS, "", frozen());
  try {
    const first = await register(setup.url);
    assert.equal(first.status, 201);
    assert.equal((await register(setup.url)).status, 201);
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

    const form = { grant_type: "authorization_code", client_id: first.json.client_id, code: "x" };
    assert.equal((await token(setup.url, form)).status, 400);
    assert.equal((await token(setup.url, form)).status, 400);
    const limited = await token(setup.url, form);
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get("retry-after"), "30");
    assert.equal(limited.json.error, "temporarily_unavailable");
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
