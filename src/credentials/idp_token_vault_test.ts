import assert from "node:assert/strict";
import type { IdpTokens } from "../core/idp_tokens.ts";
import { Secret } from "../core/secret.ts";
import { deriveAesKey } from "../crypto/keys.ts";
import { KEYS } from "../store/keys.ts";
import { openKvStore } from "../store/kv.ts";
import { testClock } from "../../tests/fixtures/clock.ts";
import { IdpTokenVault } from "./idp_token_vault.ts";

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
  return { store, clock, vault: new IdpTokenVault({ store, keys, clock, keepMs: 60_000 }) };
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
