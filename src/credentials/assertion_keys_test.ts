import assert from "node:assert/strict";
import { testClock } from "../../tests/fixtures/clock.ts";
import { Secret } from "../core/secret.ts";
import { deriveAesKey } from "../crypto/keys.ts";
import { openKvStore } from "../store/kv.ts";
import { AssertionKeys, PUBLISHED_AFTER_RETIREMENT_MS, REREAD_MS } from "./assertion_keys.ts";

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

Deno.test("AssertionKeys: a rotation reaches the other replica within REREAD_MS; the old key is published until its assertions expired", async () => {
  const { clock, store, made: [a, b] } = await replicas(2);
  try {
    const first = (await b.signing()).kid;
    const { kid, previous } = await a.rotate();
    assert.deepEqual(previous, [first]);
    assert.equal((await a.signing()).kid, kid);
    assert.equal((await b.signing()).kid, first, "b has not read the record again yet");
    clock.advance(REREAD_MS);
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
