import assert from "node:assert/strict";
import {
  ALICE,
  ALPHA,
  ALPHA_NAME,
  type AuthParts,
  BETA,
  codeForm,
  exchange,
  issueCode,
  LIFETIMES,
  refreshForm,
  registerClient,
  withAuthParts,
} from "../../tests/fixtures/auth_parts.ts";
import type { Identity } from "../core/identity.ts";
import { sha256Base64Url } from "../crypto/base64url.ts";
import { KEYS } from "../store/keys.ts";
import { GrantAdmin } from "./grant_admin.ts";

const BOB: Identity = { subject: "oidc:bob", email: "Bob@Example.com" };

function admin(parts: AuthParts): GrantAdmin {
  return new GrantAdmin({
    store: parts.store,
    clock: parts.clock,
    grants: parts.grants,
    clients: parts.clients,
  });
}

/** A grant of `identity` to a new client named `name`, through the token endpoint. */
async function grant(parts: AuthParts, identity: Identity, name: string, audience = [ALPHA]) {
  const { client } = await registerClient(parts, { client_name: name });
  const code = await issueCode(parts, client, { identity, audience });
  return { client, tokens: await exchange(parts, codeForm(client, code)) };
}

Deno.test("GrantAdmin.list() finds a person's grants by user id and by address in any case, and a client's, with the client's name", async () => {
  await withAuthParts(async (parts) => {
    const granted = parts.clock.now();
    const desktop = await grant(parts, ALICE, "Desktop");
    parts.clock.advance(60_000);
    await grant(parts, ALICE, "Editor", [ALPHA, BETA]);
    await grant(parts, BOB, "Desktop");
    const grants = admin(parts);

    const alices = await grants.list({ user: ALICE.subject });
    assert.deepEqual(alices.map((g) => g.clientName), ["Editor", "Desktop"], "most recent first");
    assert.deepEqual(alices[0].audience, [ALPHA, BETA]);
    assert.equal(alices[1].grantedAt, granted);
    assert.equal(alices[1].lastUsedAt, granted);
    assert.equal(alices[1].email, "alice@example.com");
    assert.deepEqual(
      (await grants.list({ email: "ALICE@example.COM" })).map((g) => g.id),
      alices.map((g) => g.id),
    );
    assert.deepEqual((await grants.list({ email: "bob@example.com" })).map((g) => g.userId), [
      BOB.subject,
    ]);
    assert.deepEqual(
      (await grants.list({ client: desktop.client.clientId })).map((g) => g.userId),
      [ALICE.subject],
    );
    assert.equal((await grants.list({ all: true })).length, 3);
  });
});

Deno.test("GrantAdmin.list() moves lastUsedAt at each refresh and drops a revoked grant from every index", async () => {
  await withAuthParts(async (parts) => {
    const { client, tokens } = await grant(parts, ALICE, "Desktop");
    parts.clock.advance(90_000);
    await exchange(parts, refreshForm(client, tokens.refresh_token!));
    const grants = admin(parts);
    const [view] = await grants.list({ user: ALICE.subject });
    assert.equal(view.lastUsedAt, parts.clock.now());
    assert.equal(view.grantedAt, parts.clock.now() - 90_000);
    await grants.revoke({ grant: view.id });
    for (
      const selector of [{ user: ALICE.subject }, { email: ALICE.email! }, {
        client: client.clientId,
      }, { all: true as const }]
    ) {
      assert.deepEqual(await grants.list(selector), [], JSON.stringify(selector));
    }
    assert.deepEqual(await parts.store.list(KEYS.grantsOfUser(ALICE.subject)), []);
  });
});

Deno.test("GrantAdmin.revokeOwn() revokes a person's own grant and refuses anyone else's", async () => {
  await withAuthParts(async (parts) => {
    await grant(parts, ALICE, "Desktop");
    await grant(parts, BOB, "Desktop");
    const grants = admin(parts);
    const [bobs] = await grants.list({ user: BOB.subject });
    assert.equal(await grants.revokeOwn(ALICE.subject, bobs.id), false);
    assert.equal((await grants.list({ user: BOB.subject })).length, 1);
    assert.equal(await grants.revokeOwn(ALICE.subject, "no-such-grant-000000"), false);
    assert.equal(await grants.revokeOwn(BOB.subject, bobs.id), true);
    assert.deepEqual(await grants.list({ user: BOB.subject }), []);
    assert.equal(await grants.revokeOwn(BOB.subject, bobs.id), false, "already ended");
  });
});

Deno.test("GrantAdmin.list() shows a grant without a refresh token only while its access token lives", async () => {
  await withAuthParts(async (parts) => {
    const { client } = await registerClient(parts, { grant_types: ["authorization_code"] });
    const code = await issueCode(parts, client);
    await exchange(parts, codeForm(client, code));
    const grants = admin(parts);
    parts.clock.advance(LIFETIMES.accessMs + 30_000 - 1);
    assert.equal((await grants.list({ user: ALICE.subject })).length, 1);
    parts.clock.advance(1);
    assert.deepEqual(await grants.list({ user: ALICE.subject }), []);
  });
});

Deno.test("GrantAdmin.indexLegacyGrants() lists grants stored before their facts were kept, once, and they still refresh and revoke", async () => {
  await withAuthParts(async (parts) => {
    // A family and refresh token exactly as the previous version stored them.
    const { client } = await registerClient(parts, { client_name: "Old" });
    const refresh = "legacy-refresh-token-0123456789abcdefghij";
    const hash = await sha256Base64Url(refresh);
    const expiresAt = parts.clock.now() + LIFETIMES.refreshMs;
    await parts.store.set(
      KEYS.family("legacy-family-0123456"),
      { revoked: false, refreshHash: hash, expiresAt },
    );
    await parts.store.set(KEYS.refresh(hash), {
      clientId: client.clientId,
      identity: ALICE,
      audience: [ALPHA],
      scope: "mcp",
      familyId: "legacy-family-0123456",
      expiresAt,
    });
    const grants = admin(parts);
    assert.deepEqual(await grants.list({ user: ALICE.subject }), []);
    const [listedAll] = await grants.list({ all: true });
    assert.equal(listedAll.id, "legacy-family-0123456");
    assert.equal(listedAll.userId, undefined, "its facts are unknown until indexed");

    assert.equal(await grants.indexLegacyGrants(), 1);
    assert.equal(await grants.indexLegacyGrants(), 0, "once per storage");
    const [view] = await grants.list({ email: "alice@example.com" });
    assert.equal(view.id, "legacy-family-0123456");
    assert.equal(view.clientName, "Old");
    assert.equal(view.grantedAt, undefined);

    const next = await exchange(parts, refreshForm(client, refresh));
    assert.equal((await grants.list({ user: ALICE.subject }))[0].lastUsedAt, parts.clock.now());
    assert.equal((await grants.revoke({ user: ALICE.subject })).length, 1);
    assert.deepEqual(
      await parts.verifier.verify(next.access_token, ALPHA_NAME),
      { ok: false, description: "this grant was revoked: sign in again through your MCP client" },
    );
  });
});
