import assert from "node:assert/strict";
import { boundedKey, KEYS, MAX_KEY_BYTES, MAX_PLAIN_PART_BYTES } from "./keys.ts";
import { openKvStore } from "./kv.ts";

const LONG_SUBJECT = `oidc:${"s".repeat(4096)}`;
const LONG_CLIENT = `https://client.example/${"c".repeat(2020)}`;

Deno.test("boundedKey() keeps a key that fits exactly as it is, long parts included", () => {
  const short = ["web", "consent", "oidc:alice", "gh_0123456789abcdefghijkl"];
  assert.deepEqual(boundedKey(short), short);
  // Stored before long parts were hashed: still found under the same key.
  const fits = ["credentials", "user", `oidc:${"s".repeat(1500)}`, "notion"];
  assert.deepEqual(boundedKey(fits), fits);
  // Exactly at the limit: the type byte and terminator of each of the 3 parts count.
  const atLimit = ["oauth", "client", "x".repeat(MAX_KEY_BYTES - 7 - 8 - 2)];
  assert.deepEqual(boundedKey(atLimit), atLimit);
  assert.notDeepEqual(boundedKey([...atLimit.slice(0, 2), `${atLimit[2]}x`]), atLimit);
});

Deno.test("boundedKey() hashes only the parts over the threshold when the key would not fit", () => {
  const key = boundedKey(["web", "consent", LONG_SUBJECT, "gh_0123456789abcdefghijkl"]);
  assert.equal(key[0], "web");
  assert.equal(key[1], "consent");
  assert.ok(key[2] instanceof Uint8Array && key[2].length === 32, "the subject is its SHA-256");
  assert.equal(key[3], "gh_0123456789abcdefghijkl");
  // A part just under the threshold stays, one just over it is hashed.
  const edge = boundedKey([
    "a".repeat(MAX_PLAIN_PART_BYTES - 2),
    "b".repeat(MAX_PLAIN_PART_BYTES - 1),
    LONG_SUBJECT,
  ]);
  assert.equal(edge[0], "a".repeat(MAX_PLAIN_PART_BYTES - 2));
  assert.ok(edge[1] instanceof Uint8Array);
  assert.ok(edge[2] instanceof Uint8Array);
});

Deno.test("boundedKey() counts a NUL as the two bytes Deno KV encodes it as", () => {
  const nuls = "\0".repeat(1100);
  const key = boundedKey(["oauth", "client", nuls]);
  assert.ok(key[2] instanceof Uint8Array, "2,200 encoded bytes do not fit");
});

Deno.test("boundedKey() gives distinct long identifiers distinct keys and one identifier one key", () => {
  const a = KEYS.consent(LONG_SUBJECT, LONG_CLIENT);
  const b = KEYS.consent(`${LONG_SUBJECT}t`, LONG_CLIENT);
  const c = KEYS.consent(LONG_SUBJECT, `${LONG_CLIENT}d`);
  assert.deepEqual(KEYS.consent(LONG_SUBJECT, LONG_CLIENT), a);
  assert.notDeepEqual(a, b);
  assert.notDeepEqual(a, c);
  assert.notDeepEqual(b, c);
});

Deno.test("KEYS built from kilobyte identifiers are accepted by Deno KV and find their records", async () => {
  const store = await openKvStore(":memory:");
  try {
    const keys = [
      KEYS.consent(LONG_SUBJECT, LONG_CLIENT),
      KEYS.consent(LONG_SUBJECT, "gh_0123456789abcdefghijkl"),
      KEYS.credential(LONG_SUBJECT, "notion"),
      KEYS.client(LONG_CLIENT),
      KEYS.sharedSession("s".repeat(5000)),
      KEYS.authorizeRequest("\0".repeat(3000)),
      KEYS.family("f".repeat(3000)),
      // The largest key kept as it is: Deno KV agrees that it fits.
      boundedKey(["oauth", "client", "x".repeat(MAX_KEY_BYTES - 7 - 8 - 2)]),
    ];
    for (const [i, key] of keys.entries()) await store.set(key, i);
    for (const [i, key] of keys.entries()) assert.equal(await store.get(key), i);
    // A short string that reads like a digest is another key than a hashed part.
    const hashed = keys[2][2] as Uint8Array;
    const lookalike = KEYS.credential(btoa(String.fromCharCode(...hashed)), "notion");
    assert.equal(await store.get(lookalike), undefined);
  } finally {
    store.close();
  }
});
