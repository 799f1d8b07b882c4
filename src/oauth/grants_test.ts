import assert from "node:assert/strict";
import { type TestClock, testClock } from "../../tests/fixtures/clock.ts";
import { openKvStore } from "../store/kv.ts";
import type { Store } from "../store/store.ts";
import { type GrantContext, GrantStore } from "./grants.ts";

const CONTEXT: GrantContext = {
  clientId: "client-1",
  identity: { subject: "oidc:alice", email: "alice@example.com" },
  audience: ["https://gw.example.com/alpha"],
  scope: "mcp",
};

const LIFETIMES = { codeMs: 60_000, refreshMs: 3_600_000, accessMs: 300_000 };

async function withGrants(
  test: (grants: GrantStore, clock: TestClock) => Promise<void>,
): Promise<void> {
  const store: Store = await openKvStore(":memory:");
  const clock = testClock();
  clock.freeze();
  try {
    await test(new GrantStore(store, clock, LIFETIMES), clock);
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

Deno.test("GrantStore.redeemCode() hands a code out once, and a second redemption revokes the grant the first opened", async () => {
  await withGrants(async (grants) => {
    const code = await grants.issueCode({ ...CONTEXT, redirectUri: "x", codeChallenge: "y" });
    const first = await grants.redeemCode(code);
    assert.ok(first.ok);
    assert.deepEqual(first.record, {
      ...CONTEXT,
      redirectUri: "x",
      codeChallenge: "y",
      expiresAt: first.record.expiresAt,
    });
    assert.equal(await grants.isFamilyRevoked(first.familyId), false);
    const refresh = await grants.issueRefresh(first.familyId, CONTEXT);
    assert.deepEqual(await grants.redeemCode(code), { ok: false, reason: "replayed" });
    assert.equal(await grants.isFamilyRevoked(first.familyId), true);
    assert.deepEqual(await grants.peekRefresh(refresh!), { ok: false, reason: "replayed" });
  });
});

Deno.test("GrantStore.redeemCode() answers unknown for a code it never issued", async () => {
  await withGrants(async (grants) => {
    assert.deepEqual(await grants.redeemCode("never-issued"), { ok: false, reason: "unknown" });
  });
});

Deno.test("GrantStore.peekCode() leaves the code usable, and neither it nor redeemCode() takes it at the instant it expires", async () => {
  await withGrants(async (grants, clock) => {
    const code = await grants.issueCode({ ...CONTEXT, redirectUri: "x", codeChallenge: "y" });
    clock.advance(LIFETIMES.codeMs - 1);
    assert.equal((await grants.peekCode(code))?.clientId, CONTEXT.clientId);
    assert.equal((await grants.peekCode(code))?.clientId, CONTEXT.clientId, "a peek uses nothing");
    clock.advance(1);
    assert.equal(await grants.peekCode(code), undefined);
    assert.deepEqual(await grants.redeemCode(code), { ok: false, reason: "expired" });
  });
});

Deno.test("GrantStore.peekRefresh() says expired at the instant a refresh token expires, and not before", async () => {
  await withGrants(async (grants, clock) => {
    const { refresh } = await openFamily(grants);
    clock.advance(LIFETIMES.refreshMs - 1);
    assert.ok((await grants.peekRefresh(refresh)).ok);
    clock.advance(1);
    assert.deepEqual(await grants.peekRefresh(refresh), { ok: false, reason: "expired" });
  });
});

Deno.test("GrantStore.rotateRefresh() replaces the token, and a later use of the old one revokes the grant", async () => {
  await withGrants(async (grants) => {
    const { familyId, refresh } = await openFamily(grants);
    const peek = await grants.peekRefresh(refresh);
    assert.ok(peek.ok);
    const rotation = await grants.rotateRefresh(refresh, peek.record);
    assert.ok(rotation.ok);
    assert.notEqual(rotation.token, refresh);
    assert.ok((await grants.peekRefresh(rotation.token)).ok);
    assert.deepEqual(await grants.peekRefresh(refresh), { ok: false, reason: "replayed" });
    assert.equal(await grants.isFamilyRevoked(familyId), true);
    assert.deepEqual(await grants.peekRefresh(rotation.token), { ok: false, reason: "replayed" });
  });
});

Deno.test("GrantStore.revokeFamily() ends the grant and names its refresh token as revoked", async () => {
  await withGrants(async (grants) => {
    const { familyId, refresh } = await openFamily(grants);
    await grants.revokeFamily(familyId);
    assert.equal(await grants.isFamilyRevoked(familyId), true);
    assert.deepEqual(await grants.peekRefresh(refresh), { ok: false, reason: "replayed" });
  });
});

Deno.test("GrantStore.isFamilyRevoked() counts a grant it does not know as revoked", async () => {
  await withGrants(async (grants) => {
    assert.equal(await grants.isFamilyRevoked("no-such-grant"), true);
  });
});
