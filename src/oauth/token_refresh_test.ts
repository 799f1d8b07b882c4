/** The refresh_token grant of POST /token: rotation, reuse detection, expiry, re-checks. */
import assert from "node:assert/strict";
import {
  ALICE,
  ALPHA,
  ALPHA_NAME,
  BETA,
  codeForm,
  exchange,
  issueCode,
  LIFETIMES,
  refreshForm,
  refusal,
  registerClient,
  signIn,
  withAuthParts,
} from "../../tests/fixtures/auth_parts.ts";

const REFRESH_REVOKED = {
  error: "invalid_grant",
  error_description:
    "the refresh token was already used or revoked; every token of this grant is revoked",
};
const GRANT_REVOKED = {
  ok: false,
  description: "this grant was revoked: sign in again through your MCP client",
};

Deno.test("handleTokenRequest() rotates a refresh token, and a reuse of the old one revokes the whole grant", async () => {
  await withAuthParts(async (parts) => {
    const { client, tokens } = await signIn(parts);
    const rotated = await exchange(parts, refreshForm(client, tokens.refresh_token!));
    assert.notEqual(rotated.refresh_token, tokens.refresh_token);
    assert.ok((await parts.verifier.verify(rotated.access_token, ALPHA_NAME)).ok);

    // Whoever replays the old token (a thief, or the client after a thief rotated it)...
    assert.deepEqual(
      await refusal(exchange(parts, refreshForm(client, tokens.refresh_token!))),
      REFRESH_REVOKED,
    );
    // ...ends the grant for everyone holding any of its tokens.
    assert.deepEqual(
      await refusal(exchange(parts, refreshForm(client, rotated.refresh_token!))),
      REFRESH_REVOKED,
    );
    parts.clock.advance(5_000);
    assert.deepEqual(await parts.verifier.verify(rotated.access_token, ALPHA_NAME), GRANT_REVOKED);
  });
});

Deno.test("handleTokenRequest() accepts a refresh token just before it expires and refuses it at that instant", async () => {
  await withAuthParts(async (parts) => {
    const early = await signIn(parts);
    const late = await signIn(parts);
    parts.clock.advance(LIFETIMES.refreshMs - 1);
    const rotated = await exchange(parts, refreshForm(early.client, early.tokens.refresh_token!));
    parts.clock.advance(1);
    const expired = {
      error: "invalid_grant",
      error_description: "the refresh token has expired; authorize again",
    };
    assert.deepEqual(
      await refusal(exchange(parts, refreshForm(late.client, late.tokens.refresh_token!))),
      expired,
    );
    // A rotated token has a lifetime of its own, counted from its rotation.
    parts.clock.advance(LIFETIMES.refreshMs - 2);
    assert.ok(await exchange(parts, refreshForm(early.client, rotated.refresh_token!)));
  });
});

Deno.test("handleTokenRequest() refuses a refresh token that is unknown", async () => {
  await withAuthParts(async (parts) => {
    const { client } = await registerClient(parts);
    assert.deepEqual(await refusal(exchange(parts, refreshForm(client, "made-up-token"))), {
      error: "invalid_grant",
      error_description: "the refresh token is not valid",
    });
  });
});

Deno.test("handleTokenRequest() refuses a refresh token presented by another client", async () => {
  await withAuthParts(async (parts) => {
    const { tokens } = await signIn(parts);
    const { client: other } = await registerClient(parts);
    assert.deepEqual(await refusal(exchange(parts, refreshForm(other, tokens.refresh_token!))), {
      error: "invalid_grant",
      error_description: "the refresh token was issued to another client",
    });
  });
});

Deno.test("handleTokenRequest() refuses a refresh, and revokes the grant, when the access policy no longer admits the person", async () => {
  await withAuthParts(async (parts) => {
    const { client, tokens } = await signIn(parts);
    parts.refusal = "alice@example.com is not permitted by this gateway's access policy";
    assert.deepEqual(await refusal(exchange(parts, refreshForm(client, tokens.refresh_token!))), {
      error: "invalid_grant",
      error_description:
        "access was withdrawn: alice@example.com is not permitted by this gateway's access policy",
    });
    parts.refusal = undefined;
    assert.deepEqual(
      await refusal(exchange(parts, refreshForm(client, tokens.refresh_token!))),
      REFRESH_REVOKED,
    );
  });
});

Deno.test("handleTokenRequest() issues no refresh token to a client without the refresh_token grant, and refuses it that grant", async () => {
  await withAuthParts(async (parts) => {
    const { client } = await registerClient(parts, { grant_types: ["authorization_code"] });
    const code = await issueCode(parts, client);
    const tokens = await exchange(parts, codeForm(client, code));
    assert.equal(tokens.refresh_token, undefined);
    assert.deepEqual(await refusal(exchange(parts, refreshForm(client, "anything"))), {
      error: "unauthorized_client",
      error_description: "this client did not register the refresh_token grant",
    });
  });
});

Deno.test("handleTokenRequest() puts in the access token only the groups the configuration names, and a refresh after a reload that names another adds it", async () => {
  await withAuthParts(async (parts) => {
    const groups = ["editors", "ops", ...Array.from({ length: 150 }, (_, i) => `team-${i}`)];
    const { client } = await registerClient(parts);
    const code = await issueCode(parts, client, { identity: { ...ALICE, groups } });
    parts.namedGroups = new Set(["editors", "not-a-member"]);
    const first = await exchange(parts, codeForm(client, code));
    const check = await parts.verifier.verify(first.access_token, ALPHA_NAME);
    assert.ok(check.ok);
    assert.deepEqual(check.claims.groups, ["editors"]);

    // A reload names "ops" too: the grant kept every group, so the refresh picks it up...
    parts.namedGroups = new Set(["editors", "ops"]);
    const second = await exchange(parts, refreshForm(client, first.refresh_token!));
    const refreshed = await parts.verifier.verify(second.access_token, ALPHA_NAME);
    assert.ok(refreshed.ok);
    assert.deepEqual(refreshed.claims.groups, ["editors", "ops"]);

    // ...and still has them after rotation; when nothing is named, the claim is left out.
    parts.namedGroups = new Set(["team-149"]);
    const third = await exchange(parts, refreshForm(client, second.refresh_token!));
    const rotated = await parts.verifier.verify(third.access_token, ALPHA_NAME);
    assert.ok(rotated.ok);
    assert.deepEqual(rotated.claims.groups, ["team-149"]);
    parts.namedGroups = new Set();
    const fourth = await exchange(parts, refreshForm(client, third.refresh_token!));
    const none = await parts.verifier.verify(fourth.access_token, ALPHA_NAME);
    assert.ok(none.ok);
    assert.equal(none.claims.groups, undefined);
  });
});

Deno.test("handleTokenRequest() refuses a refresh, and ends the grant, once a server's access no longer admits the person", async () => {
  await withAuthParts(async (parts) => {
    const { client, tokens } = await signIn(parts, [ALPHA, BETA]);
    // A narrowed refresh for a server still open to the person is fine.
    parts.refusedServers.add(BETA);
    const form = refreshForm(client, tokens.refresh_token!);
    form.set("resource", ALPHA);
    const narrowed = await exchange(parts, form);
    // The whole audience is not.
    assert.deepEqual(await refusal(exchange(parts, refreshForm(client, narrowed.refresh_token!))), {
      error: "invalid_grant",
      error_description: `access was withdrawn: alice@example.com may not use ${BETA}`,
    });
    parts.refusedServers.clear();
    assert.deepEqual(
      await refusal(exchange(parts, refreshForm(client, narrowed.refresh_token!))),
      REFRESH_REVOKED,
    );
  });
});

Deno.test("handleTokenRequest() issues no tokens for a code whose server's access changed since consent", async () => {
  await withAuthParts(async (parts) => {
    const { client } = await registerClient(parts);
    const code = await issueCode(parts, client, { audience: [ALPHA] });
    parts.refusedServers.add(ALPHA);
    assert.deepEqual(await refusal(exchange(parts, codeForm(client, code))), {
      error: "invalid_grant",
      error_description: `access was withdrawn: alice@example.com may not use ${ALPHA}`,
    });
  });
});
