import assert from "node:assert/strict";
import type { IdpTokens } from "../core/idp_tokens.ts";
import { Secret } from "../core/secret.ts";
import { deriveAesKey } from "../crypto/keys.ts";
import { KEYS } from "../store/keys.ts";
import { openKvStore } from "../store/kv.ts";
import { testClock } from "../../tests/fixtures/clock.ts";
import { sleep, within } from "../../tests/fixtures/waits.ts";
import { IdpTokenVault, REFRESH_LEASE_MS } from "./idp_token_vault.ts";

const SECRET = new Secret("idp-token-test-secret-0123456789-abcdefghijk");
const TOKENS: IdpTokens = {
  accessToken: "idp-access-token-of-alice",
  refreshToken: "idp-refresh-token-of-alice",
  accessExpiresAt: 1_700_003_600_000,
  obtainedAt: 1_700_000_000_000,
};

async function vaultOn(secret = SECRET) {
  const store = await openKvStore(":memory:");
  const clock = testClock();
  const keys = [await deriveAesKey(secret, "idp-tokens")];
  const vault = () => new IdpTokenVault({ store, keys, clock, keepMs: 60_000 });
  /** Another replica's vault: the same storage and secret, its own memory. */
  return { store, clock, vault: vault(), replica: vault() };
}

Deno.test("IdpTokenVault keeps a person's provider tokens sealed, bound to the person", async () => {
  const { store, vault } = await vaultOn();
  try {
    await vault.keep("oidc:alice", TOKENS);
    const raw = JSON.stringify(await store.get(KEYS.idpTokens("oidc:alice")));
    assert.ok(!raw.includes("idp-access-token") && !raw.includes("idp-refresh-token"), raw);
    assert.deepEqual((await vault.read("oidc:alice")).tokens, TOKENS);
    // Copied to another person, it does not open.
    await store.set(KEYS.idpTokens("oidc:mallory"), await store.get(KEYS.idpTokens("oidc:alice")));
    const copied = await vault.read("oidc:mallory");
    assert.equal(copied.tokens, undefined);
    assert.equal(copied.unreadable, true);
  } finally {
    store.close();
  }
});

Deno.test("IdpTokenVault.replace() writes only over the record it read; the loser reads the winner's", async () => {
  const { store, vault } = await vaultOn();
  try {
    await vault.keep("oidc:alice", TOKENS);
    const first = await vault.read("oidc:alice");
    const second = await vault.read("oidc:alice");
    const rotatedA = { ...TOKENS, refreshToken: "rotated-by-a" };
    const rotatedB = { ...TOKENS, refreshToken: "rotated-by-b" };
    assert.equal(await vault.replace("oidc:alice", first, rotatedA), true);
    assert.equal(await vault.replace("oidc:alice", second, rotatedB), false);
    assert.deepEqual((await vault.read("oidc:alice")).tokens, rotatedA);
  } finally {
    store.close();
  }
});

Deno.test("IdpTokenVault: a record past its keeping time, or forgotten, is not read", async () => {
  const { store, clock, vault } = await vaultOn();
  try {
    await vault.keep("oidc:alice", TOKENS);
    clock.advance(60_001);
    assert.equal((await vault.read("oidc:alice")).tokens, undefined);
    await vault.keep("oidc:alice", TOKENS);
    await vault.forget("oidc:alice");
    assert.equal((await vault.read("oidc:alice")).tokens, undefined);
  } finally {
    store.close();
  }
});

Deno.test("IdpTokenVault.oneAtATime(): a refresh on one replica waits for another replica's to end, and the hold is gone after either", async () => {
  const { store, vault, replica } = await vaultOn();
  try {
    const events: string[] = [];
    const gate = Promise.withResolvers<void>();
    const first = vault.oneAtATime("oidc:alice", async () => {
      events.push("a starts");
      await gate.promise;
      events.push("a ends");
    });
    await within(
      "replica A's refresh to start",
      (async () => {
        while (!events.includes("a starts")) await sleep(5);
      })(),
    );
    const second = replica.oneAtATime("oidc:alice", () => {
      events.push("b starts");
      return Promise.resolve("b's answer");
    });
    // Several of B's looks at the hold go by while A is at the provider.
    await sleep(300);
    assert.deepEqual(events, ["a starts"]);
    gate.resolve();
    assert.equal(await within("replica B's refresh after A's", second, 10_000), "b's answer");
    await first;
    assert.deepEqual(events, ["a starts", "a ends", "b starts"]);
    assert.equal(await store.get(KEYS.idpRefreshLease("oidc:alice")), undefined);
    // Another person is never held by Alice's refresh, and a failed refresh lets go too.
    await assert.rejects(
      replica.oneAtATime("oidc:bob", () => Promise.reject(new Error("refused"))),
      /refused/,
    );
    assert.equal(await store.get(KEYS.idpRefreshLease("oidc:bob")), undefined);
  } finally {
    store.close();
  }
});

Deno.test("IdpTokenVault.oneAtATime(): a hold left by a replica that died stops others only until it lapses", async () => {
  const { store, clock, vault } = await vaultOn();
  try {
    await store.set(KEYS.idpRefreshLease("oidc:alice"), {
      holder: "a replica that died",
      expiresAt: clock.now() + REFRESH_LEASE_MS,
    });
    let ran = false;
    const refresh = vault.oneAtATime("oidc:alice", () => Promise.resolve(ran = true));
    await sleep(300);
    assert.equal(ran, false, "the hold was not waited for");
    clock.advance(REFRESH_LEASE_MS);
    // Well before the bound on waiting (a lease's length on the platform's timers).
    await within("the refresh once the dead replica's hold lapsed", refresh, 10_000);
    assert.equal(ran, true);
  } finally {
    store.close();
  }
});
