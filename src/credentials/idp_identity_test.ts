import assert from "node:assert/strict";
import type { Identity } from "../core/identity.ts";
import type { IdpTokens } from "../core/idp_tokens.ts";
import { Secret } from "../core/secret.ts";
import { deriveAesKey } from "../crypto/keys.ts";
import { createLogger } from "../observability/logger.ts";
import { openKvStore } from "../store/kv.ts";
import { testClock } from "../../tests/fixtures/clock.ts";
import { IdentityRenewal, type IdpRenewer } from "./idp_identity.ts";
import { IdpTokenVault } from "./idp_token_vault.ts";
import { IdpError } from "../idp/provider.ts";

const HOUR = 60 * 60_000;
const tokens = (refreshToken: string): IdpTokens => ({
  accessToken: "a",
  refreshToken,
  obtainedAt: 0,
});

async function parts(renewer: IdpRenewer) {
  const store = await openKvStore(":memory:");
  const clock = testClock();
  clock.freeze();
  const vault = new IdpTokenVault({
    store,
    clock,
    keys: [
      await deriveAesKey(new Secret("idp-identity-test-secret-0123456789-abcdef"), "idp-tokens"),
    ],
    keepMs: 24 * HOUR,
  });
  const logs: string[] = [];
  const renewal = new IdentityRenewal({
    vault,
    provider: renewer,
    clock,
    logger: createLogger("debug", (line) => logs.push(line)),
    maxAgeMs: HOUR,
  });
  const alice: Identity = { subject: "oidc:alice", groups: ["editors"], describedAt: clock.now() };
  return { store, clock, vault, renewal, logs, alice };
}

Deno.test("IdentityRenewal.current() asks the provider once for a person's grants refreshing together", async () => {
  let asked = 0;
  const gate = Promise.withResolvers<void>();
  const p = await parts({
    renew: async (_subject, kept) => {
      asked++;
      await gate.promise;
      return { groups: ["staff"], tokens: { ...kept, refreshToken: "rotated" } };
    },
  });
  try {
    await p.vault.keep("oidc:alice", tokens("r1"));
    assert.deepEqual(await p.renewal.current(p.alice), { ok: true, identity: p.alice });
    p.clock.advance(HOUR);
    const both = Promise.all([p.renewal.current(p.alice), p.renewal.current(p.alice)]);
    gate.resolve();
    const [first, second] = await both;
    assert.equal(asked, 1);
    assert.ok(first.ok && second.ok);
    assert.deepEqual(first.identity.groups, ["staff"]);
    assert.deepEqual(second.identity.groups, ["staff"]);
    assert.equal((await p.vault.read("oidc:alice")).tokens?.refreshToken, "rotated");
  } finally {
    p.store.close();
  }
});

Deno.test("IdentityRenewal.current(): a refusal after another replica rotated the tokens is asked again with theirs, not taken for the person's end", async () => {
  const seen: string[] = [];
  const p: Awaited<ReturnType<typeof parts>> = await parts({
    renew: async (_subject, kept) => {
      seen.push(kept.refreshToken!);
      if (kept.refreshToken === "r1") {
        // Another replica used r1 first and kept what the provider rotated it to.
        await p.vault.keep("oidc:alice", tokens("r2"));
        throw new IdpError("revoked", "invalid_grant");
      }
      return { groups: ["staff"], tokens: kept };
    },
  });
  try {
    await p.vault.keep("oidc:alice", tokens("r1"));
    p.clock.advance(HOUR);
    const current = await p.renewal.current(p.alice);
    assert.deepEqual(seen, ["r1", "r2"]);
    assert.ok(current.ok);
    assert.deepEqual(current.identity.groups, ["staff"]);
    // A refusal with nobody else's tokens in between ends it, and the tokens are forgotten.
    p.clock.advance(HOUR);
    const gone = await parts({
      renew: () => Promise.reject(new IdpError("revoked", "invalid_grant")),
    });
    try {
      await gone.vault.keep("oidc:alice", tokens("r1"));
      gone.clock.advance(HOUR);
      const ended = await gone.renewal.current(gone.alice);
      assert.equal(ended.ok, false);
      assert.equal((await gone.vault.read("oidc:alice")).tokens, undefined);
    } finally {
      gone.store.close();
    }
  } finally {
    p.store.close();
  }
});
