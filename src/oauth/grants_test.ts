import assert from "node:assert/strict";
import { systemClock } from "../core/clock.ts";
import { openKvStore } from "../store/kv.ts";
import type { Store } from "../store/store.ts";
import { type GrantContext, GrantStore } from "./grants.ts";

const CONTEXT: GrantContext = {
  clientId: "client-1",
  identity: { subject: "oidc:alice", email: "alice@example.com" },
  audience: ["https://gw.example.com/alpha"],
  scope: "mcp",
};

async function withGrants(test: (grants: GrantStore) => Promise<void>): Promise<void> {
  const store: Store = await openKvStore(":memory:");
  try {
    await test(
      new GrantStore(store, systemClock, {
        codeMs: 60_000,
        refreshMs: 3_600_000,
        accessMs: 300_000,
      }),
    );
  } finally {
    store.close();
  }
}

/** A family opened from a code, with its first refresh token. */
async function openFamily(grants: GrantStore): Promise<{ familyId: string; refresh: string }> {
  const code = await grants.issueCode({ ...CONTEXT, redirectUri: "x", codeChallenge: "y" });
  const redemption = await grants.redeemCode(code);
  assert.ok(redemption.ok);
  const refresh = await grants.issueRefresh(redemption.familyId, CONTEXT);
  assert.ok(refresh);
  return { familyId: redemption.familyId, refresh };
}

Deno.test("GrantStore.rotateRefresh() refuses, and the family stays revoked, when it was revoked after peekRefresh", async () => {
  await withGrants(async (grants) => {
    const { familyId, refresh } = await openFamily(grants);
    const peek = await grants.peekRefresh(refresh);
    assert.ok(peek.ok);
    // A replay of an older token of the family lands between the checks and the rotation.
    await grants.revokeFamily(familyId);
    assert.deepEqual(await grants.rotateRefresh(refresh, peek.record), {
      ok: false,
      reason: "revoked",
    });
    assert.equal(await grants.isFamilyRevoked(familyId), true);
    assert.deepEqual(await grants.peekRefresh(refresh), { ok: false, reason: "replayed" });
  });
});

Deno.test("GrantStore.rotateRefresh() hands one of many concurrent rotations the new token and revokes the family for the rest", async () => {
  await withGrants(async (grants) => {
    const { familyId, refresh } = await openFamily(grants);
    const peek = await grants.peekRefresh(refresh);
    assert.ok(peek.ok);
    const results = await Promise.all(
      Array.from({ length: 10 }, () => grants.rotateRefresh(refresh, peek.record)),
    );
    assert.equal(results.filter((r) => r.ok).length, 1);
    assert.equal(await grants.isFamilyRevoked(familyId), true, "a second use is a replay");
  });
});

Deno.test("GrantStore.issueRefresh() issues nothing for a family revoked before it commits", async () => {
  await withGrants(async (grants) => {
    const code = await grants.issueCode({ ...CONTEXT, redirectUri: "x", codeChallenge: "y" });
    const redemption = await grants.redeemCode(code);
    assert.ok(redemption.ok);
    // A replay of the code revokes the family while its exchange is still checking PKCE.
    assert.deepEqual(await grants.redeemCode(code), { ok: false, reason: "replayed" });
    assert.equal(await grants.issueRefresh(redemption.familyId, CONTEXT), undefined);
    assert.equal(await grants.isFamilyRevoked(redemption.familyId), true);
  });
});
