import assert from "node:assert/strict";
import { testClock } from "../../../tests/fixtures/clock.ts";
import { testCa } from "../../../tests/fixtures/certificates.ts";
import { Secret } from "../../core/secret.ts";
import { deriveAesKey } from "../../crypto/keys.ts";
import { KEYS } from "../../store/keys.ts";
import { openKvStore } from "../../store/kv.ts";
import { AcmeStore } from "./acme_store.ts";

const secret = (text: string) => deriveAesKey(new Secret(text.padEnd(40, "x")), "tls-keys");

Deno.test("AcmeStore keeps private keys sealed: storage holds no key in clear, another secret opens nothing", async () => {
  const clock = testClock();
  const store = await openKvStore(":memory:", { clock });
  const ca = await testCa();
  try {
    const leaf = await ca.issue("gw");
    const acme = new AcmeStore(store, clock, [await secret("one")]);
    await acme.saveCertificate("gw.example.com", leaf.cert, leaf.key);
    const account = await acme.accountKey(
      "https://ca.example/dir",
      () => Promise.resolve("ACCOUNT KEY PEM"),
    );
    assert.equal(account, "ACCOUNT KEY PEM");
    const raw = JSON.stringify([
      await store.get(KEYS.tlsCertificate("gw.example.com")),
      await store.get(KEYS.acmeAccount("https://ca.example/dir")),
    ]);
    assert.ok(!raw.includes("PRIVATE KEY") && !raw.includes("ACCOUNT KEY PEM"), raw.slice(0, 200));
    assert.equal((await acme.certificate("gw.example.com"))?.key, leaf.key);
    // Under a rotated secret listed second, it still opens; under an unrelated one, it does not.
    const rotated = new AcmeStore(store, clock, [await secret("two"), await secret("one")]);
    assert.equal((await rotated.certificate("gw.example.com"))?.key, leaf.key);
    const stranger = new AcmeStore(store, clock, [await secret("three")]);
    assert.equal(await stranger.certificate("gw.example.com"), undefined);
  } finally {
    store.close();
    await Deno.remove(ca.dir, { recursive: true });
  }
});

Deno.test("AcmeStore.lock() lets one replica order at a time, until the lock expires", async () => {
  const clock = testClock();
  clock.freeze();
  const store = await openKvStore(":memory:", { clock });
  try {
    const acme = new AcmeStore(store, clock, [await secret("one")]);
    assert.equal(await acme.lock("gw.example.com", "a"), true);
    assert.equal(await acme.lock("gw.example.com", "b"), false);
    assert.equal(await acme.lock("gw.example.com", "a"), true, "its holder may take it again");
    clock.advance(10 * 60_000 + 1);
    assert.equal(await acme.lock("gw.example.com", "b"), true, "an order that died frees it");
    await acme.unlock("gw.example.com", "a"); // not a's any more: nothing happens
    assert.equal(await acme.lock("gw.example.com", "a"), false);
    await acme.unlock("gw.example.com", "b");
    assert.equal(await acme.lock("gw.example.com", "a"), true);
  } finally {
    store.close();
  }
});
