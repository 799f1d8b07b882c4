import assert from "node:assert/strict";
import { testClock } from "../../tests/fixtures/clock.ts";
import { Secret } from "../core/secret.ts";
import { deriveAesKey } from "../crypto/keys.ts";
import { openKvStore } from "../store/kv.ts";
import {
  AssertionKeys,
  JWKS_MAX_AGE_S,
  KEY_ACTIVATION_MS,
  PUBLISHED_AFTER_RETIREMENT_MS,
  REREAD_MS,
} from "./assertion_keys.ts";

const sealKey = (text: string) => deriveAesKey(new Secret(text.padEnd(40, "x")), "assertion-keys");

async function replicas(count: number, secret = "one") {
  const clock = testClock();
  clock.freeze();
  const store = await openKvStore(":memory:", { clock });
  const key = await sealKey(secret);
  const made = Array.from(
    { length: count },
    () => new AssertionKeys({ store, clock, sealKeys: [key] }),
  );
  return { clock, store, made };
}

Deno.test("AssertionKeys: replicas starting together sign with one key, made once", async () => {
  const { store, made } = await replicas(3);
  try {
    const kids = await Promise.all(made.map(async (keys) => (await keys.signing()).kid));
    assert.equal(new Set(kids).size, 1);
    const published = await made[0].published();
    assert.deepEqual(published.map((key) => key.kid), [kids[0]]);
    assert.equal(published[0].kty, "EC");
    assert.equal(published[0].crv, "P-256");
    assert.equal((published[0] as { d?: string }).d, undefined, "never the private half");
  } finally {
    store.close();
  }
});

Deno.test("AssertionKeys: a rotation's key signs on every replica once published long enough; the old key is published until its assertions expired", async () => {
  const { clock, store, made: [a, b] } = await replicas(2);
  try {
    const first = (await b.signing()).kid;
    const { kid, previous } = await a.rotate();
    assert.deepEqual(previous, [first]);
    assert.equal((await a.signing()).kid, first, "published before it signs");
    assert.deepEqual((await a.published()).map((key) => key.kid), [kid, first]);
    clock.advance(KEY_ACTIVATION_MS);
    assert.equal((await a.signing()).kid, kid);
    assert.equal((await b.signing()).kid, kid);
    assert.deepEqual((await b.published()).map((key) => key.kid), [kid, first]);
    clock.advance(PUBLISHED_AFTER_RETIREMENT_MS - REREAD_MS);
    clock.advance(REREAD_MS);
    assert.deepEqual((await b.published()).map((key) => key.kid), [kid]);
    // The next rotation drops it from storage altogether.
    const third = await a.rotate();
    assert.deepEqual(third.previous, [kid]);
  } finally {
    store.close();
  }
});

Deno.test("AssertionKeys: after a rotation no replica signs with a key that a JWKS a backend still caches lacks, even one another replica served from its last read", async () => {
  const { clock, store, made: [a, b] } = await replicas(2);
  try {
    await a.signing();
    clock.advance(REREAD_MS - 1_000);
    // b reads the record just before the rotation; a backend fetches b's JWKS just after it and
    // keeps it for its max-age, as the route's cache-control says.
    await b.published();
    const rotated = await a.rotate();
    const cached = (await b.published()).map((key) => key.kid);
    for (let waited = 0; waited <= JWKS_MAX_AGE_S * 1000; waited += 5_000) {
      for (const replica of [a, b]) {
        const { kid } = await replica.signing();
        assert.ok(cached.includes(kid), `${kid} signs ${waited} ms after, unknown to ${cached}`);
      }
      clock.advance(5_000);
    }
    // Rotating twice in a row: the key in between never signs unpublished either.
    const again = await a.rotate();
    clock.advance(KEY_ACTIVATION_MS + REREAD_MS);
    for (const replica of [a, b]) assert.equal((await replica.signing()).kid, again.kid);
    const published = (await b.published()).map((key) => key.kid);
    assert.deepEqual(published.slice(0, 2), [again.kid, rotated.kid]);
  } finally {
    store.close();
  }
});

Deno.test("AssertionKeys: under another master secret the key cannot sign, and the error says what to do", async () => {
  const { store, clock, made: [a] } = await replicas(1);
  try {
    await a.signing();
    const other = new AssertionKeys({ store, clock, sealKeys: [await sealKey("two")] });
    await assert.rejects(other.signing(), /previousSecrets, or run gatehouse keys rotate/);
    // Listing the old secret second opens it again.
    const both = new AssertionKeys({
      store,
      clock,
      sealKeys: [await sealKey("two"), await sealKey("one")],
    });
    assert.equal((await both.signing()).kid, (await a.signing()).kid);
  } finally {
    store.close();
  }
});
