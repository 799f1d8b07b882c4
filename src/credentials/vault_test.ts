import assert from "node:assert/strict";
import { Secret } from "../core/secret.ts";
import { deriveAesKey } from "../crypto/keys.ts";
import { KEYS } from "../store/keys.ts";
import { openKvStore } from "../store/kv.ts";
import { CredentialVault, type StoredCredential, UNREADABLE } from "./vault.ts";

const SECRET = new Secret("vault-test-secret-0123456789-abcdefghijklmnop");
const OTHER_SECRET = new Secret("another-secret-entirely-0123456789-abcdefgh");
const CREDENTIAL: StoredCredential = {
  source: "manual",
  accessToken: "ntn_person_a_secret_token",
  updatedAt: 1_700_000_000_000,
};

async function vaultOn(path: string, ...secrets: Secret[]) {
  const store = await openKvStore(path);
  const keys = await Promise.all(secrets.map((s) => deriveAesKey(s, "vault-encryption")));
  return { store, vault: new CredentialVault(store, keys) };
}

Deno.test("CredentialVault stores sealed records: the token never appears in storage", async () => {
  const { store, vault } = await vaultOn(":memory:", SECRET);
  try {
    await vault.put("oidc:alice", "notion", CREDENTIAL);
    const raw = await store.get<{ sealed: string }>(KEYS.credential("oidc:alice", "notion"));
    assert.match(raw!.sealed, /^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
    assert.ok(!JSON.stringify(raw).includes("ntn_person_a"));
    assert.deepEqual(await vault.get("oidc:alice", "notion"), CREDENTIAL);
    assert.equal(await vault.get("oidc:alice", "linear"), undefined);
  } finally {
    store.close();
  }
});

Deno.test("CredentialVault refuses a tampered record", async () => {
  const { store, vault } = await vaultOn(":memory:", SECRET);
  try {
    await vault.put("oidc:alice", "notion", CREDENTIAL);
    const key = KEYS.credential("oidc:alice", "notion");
    const { sealed } = (await store.get<{ sealed: string }>(key))!;
    const body = sealed.split(".")[2];
    const flipped = body.slice(0, 5) + (body[5] === "A" ? "B" : "A") + body.slice(6);
    await store.set(key, { sealed: sealed.replace(body, flipped) });
    assert.equal(await vault.get("oidc:alice", "notion"), UNREADABLE);
    await store.set(key, { sealed: "v1.garbage" });
    assert.equal(await vault.get("oidc:alice", "notion"), UNREADABLE);
  } finally {
    store.close();
  }
});

Deno.test("CredentialVault: a record moved to another person or service does not open", async () => {
  const { store, vault } = await vaultOn(":memory:", SECRET);
  try {
    await vault.put("oidc:alice", "notion", CREDENTIAL);
    const record = await store.get(KEYS.credential("oidc:alice", "notion"));
    await store.set(KEYS.credential("oidc:mallory", "notion"), record);
    await store.set(KEYS.credential("oidc:alice", "linear"), record);
    assert.equal(await vault.get("oidc:mallory", "notion"), UNREADABLE);
    assert.equal(await vault.get("oidc:alice", "linear"), UNREADABLE);
  } finally {
    store.close();
  }
});

Deno.test("CredentialVault reads old records after a restart with the same secret, not with another", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/vault.kv`;
  try {
    const first = await vaultOn(path, SECRET);
    await first.vault.put("oidc:alice", "notion", CREDENTIAL);
    first.store.close();

    const again = await vaultOn(path, SECRET);
    assert.deepEqual(await again.vault.get("oidc:alice", "notion"), CREDENTIAL);
    again.store.close();

    const other = await vaultOn(path, OTHER_SECRET);
    assert.equal(await other.vault.get("oidc:alice", "notion"), UNREADABLE);
    other.store.close();

    // During a rotation the old secret is listed after the new one: old records still open,
    // and what is written now is sealed under the new secret only.
    const rotated = await vaultOn(path, OTHER_SECRET, SECRET);
    assert.deepEqual(await rotated.vault.get("oidc:alice", "notion"), CREDENTIAL);
    await rotated.vault.put("oidc:alice", "notion", { ...CREDENTIAL, accessToken: "ntn_new" });
    rotated.store.close();
    const newOnly = await vaultOn(path, OTHER_SECRET);
    assert.equal(
      (await newOnly.vault.get("oidc:alice", "notion") as StoredCredential).accessToken,
      "ntn_new",
    );
    newOnly.store.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
