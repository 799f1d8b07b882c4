import assert from "node:assert/strict";
import * as jose from "jose";
import { testClock } from "../../tests/fixtures/clock.ts";
import { IssuerKeys, KEYS_MAX_AGE_MS, REFETCH_INTERVAL_MS } from "./issuer_keys.ts";

const ISSUER = "https://login.example.com";

async function publicJwk(kid: string): Promise<jose.JWK> {
  const { publicKey } = await jose.generateKeyPair("ES256", { extractable: true });
  return { ...(await jose.exportJWK(publicKey)), kid };
}

Deno.test("IssuerKeys.keysFor() fetches an issuer's keys once, and again for an unknown kid at most once per 30 s", async () => {
  const clock = testClock();
  clock.freeze();
  const published = [await publicJwk("a")];
  let fetches = 0;
  const keys = new IssuerKeys(() => {
    fetches++;
    return Promise.resolve({ keys: published });
  }, clock);
  assert.equal((await keys.keysFor(ISSUER, "a", "ES256")).ok, true);
  assert.equal((await keys.keysFor(ISSUER, "a", "ES256")).ok, true);
  assert.equal(fetches, 1);
  published.push(await publicJwk("b"));
  assert.equal((await keys.keysFor(ISSUER, "b", "ES256")).ok, false, "no fetch within 30 s");
  clock.advance(REFETCH_INTERVAL_MS);
  // Many unknown kids at once and in a row: one fetch within the interval, none more.
  await Promise.all([1, 2, 3].map(() => keys.keysFor(ISSUER, "zz", "ES256")));
  assert.equal((await keys.keysFor(ISSUER, "b", "ES256")).ok, true, "b came with that fetch");
  assert.equal(fetches, 2);
  for (let i = 0; i < 10; i++) await keys.keysFor(ISSUER, `x${i}`, "ES256");
  assert.equal(fetches, 2, "no fetch within 30 s of the last");
  clock.advance(REFETCH_INTERVAL_MS);
  await keys.keysFor(ISSUER, "x", "ES256");
  assert.equal(fetches, 3);
});

Deno.test("IssuerKeys.keysFor() drops a withdrawn key at the next fetch, which age brings too", async () => {
  const clock = testClock();
  clock.freeze();
  let published = [await publicJwk("a")];
  const keys = new IssuerKeys(() => Promise.resolve({ keys: published }), clock);
  assert.equal((await keys.keysFor(ISSUER, "a", "ES256")).ok, true);
  published = [await publicJwk("b")];
  assert.equal((await keys.keysFor(ISSUER, "a", "ES256")).ok, true, "known until fetched again");
  clock.advance(KEYS_MAX_AGE_MS);
  const lookup = await keys.keysFor(ISSUER, "a", "ES256");
  assert.deepEqual(lookup, {
    ok: false,
    reason:
      `issuer ${ISSUER} publishes no current ES256 key with kid a (withdrawn, or never its key)`,
  });
});

Deno.test("IssuerKeys.keysFor() keeps the known keys when a fetch fails, and says so when it knows none", async () => {
  const clock = testClock();
  clock.freeze();
  let failing = true;
  const jwk = await publicJwk("a");
  const keys = new IssuerKeys(
    () =>
      failing ? Promise.reject(new Error("connection refused")) : Promise.resolve({ keys: [jwk] }),
    clock,
  );
  assert.deepEqual(await keys.keysFor(ISSUER, "a", "ES256"), {
    ok: false,
    reason:
      `the keys of issuer ${ISSUER} could not be fetched (connection refused); try again later`,
  });
  failing = false;
  clock.advance(REFETCH_INTERVAL_MS);
  assert.equal((await keys.keysFor(ISSUER, "a", "ES256")).ok, true);
  failing = true;
  clock.advance(KEYS_MAX_AGE_MS);
  assert.equal((await keys.keysFor(ISSUER, "a", "ES256")).ok, true, "an outage keeps the keys");
});

Deno.test("IssuerKeys remembers at most 1,000 issuers, forgetting the oldest", async () => {
  const clock = testClock();
  clock.freeze();
  const jwk = await publicJwk("a");
  const asked: string[] = [];
  const keys = new IssuerKeys((issuer) => {
    asked.push(issuer);
    return Promise.resolve({ keys: [jwk] });
  }, clock);
  for (let i = 0; i <= 1_000; i++) await keys.keysFor(`https://c${i}.example/jwks`, "a", "ES256");
  assert.equal(asked.length, 1_001);
  await keys.keysFor("https://c1000.example/jwks", "a", "ES256");
  assert.equal(asked.length, 1_001, "the newest is still known");
  await keys.keysFor("https://c0.example/jwks", "a", "ES256");
  assert.equal(asked.length, 1_002, "the oldest was forgotten and is fetched again");
});
