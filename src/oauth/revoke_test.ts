import assert from "node:assert/strict";
import {
  admitAll,
  ALPHA_NAME,
  type AuthParts,
  exchange,
  refreshForm,
  refusal,
  registerClient,
  signIn,
  withAuthParts,
} from "../../tests/fixtures/auth_parts.ts";
import type { ClientRecord } from "./clients.ts";
import { handleRevocationRequest } from "./revoke.ts";
import type { Admit } from "./token.ts";

const REFRESH_REVOKED = {
  error: "invalid_grant",
  error_description:
    "the refresh token was already used or revoked; every token of this grant is revoked",
};
const GRANT_REVOKED = {
  ok: false,
  description: "this grant was revoked: sign in again through your MCP client",
};

function revoke(
  parts: AuthParts,
  client: ClientRecord,
  fields: Record<string, string>,
  authorization: string | null = null,
  admit: Admit = admitAll,
) {
  const form = new URLSearchParams(
    authorization ? fields : { client_id: client.clientId, ...fields },
  );
  return handleRevocationRequest(
    form,
    authorization,
    {
      clients: parts.clients,
      grants: parts.grants,
      accessTokens: parts.accessTokens,
    },
    admit,
  );
}

Deno.test("handleRevocationRequest() with a refresh token ends the whole grant: refresh and access tokens", async () => {
  await withAuthParts(async (parts) => {
    const { client, tokens } = await signIn(parts);
    const outcome = await revoke(parts, client, {
      token: tokens.refresh_token!,
      token_type_hint: "refresh_token",
    });
    assert.ok(outcome.revoked);
    assert.deepEqual(
      await refusal(exchange(parts, refreshForm(client, tokens.refresh_token!))),
      REFRESH_REVOKED,
    );
    assert.deepEqual(await parts.verifier.verify(tokens.access_token, ALPHA_NAME), GRANT_REVOKED);
  });
});

Deno.test("handleRevocationRequest() with an access token ends its grant, whatever the hint says", async () => {
  await withAuthParts(async (parts) => {
    const { client, tokens } = await signIn(parts);
    // The wrong hint only orders the search (RFC 7009 §2.1).
    await revoke(parts, client, { token: tokens.access_token, token_type_hint: "refresh_token" });
    assert.deepEqual(await parts.verifier.verify(tokens.access_token, ALPHA_NAME), GRANT_REVOKED);
    assert.deepEqual(
      await refusal(exchange(parts, refreshForm(client, tokens.refresh_token!))),
      REFRESH_REVOKED,
    );
  });
});

Deno.test("handleRevocationRequest() leaves another client's tokens alone and answers as for an unknown token", async () => {
  await withAuthParts(async (parts) => {
    const { tokens } = await signIn(parts);
    const { client: other } = await registerClient(parts);
    for (const token of [tokens.access_token, tokens.refresh_token!]) {
      assert.deepEqual(await revoke(parts, other, { token }), {});
    }
    assert.ok((await parts.verifier.verify(tokens.access_token, ALPHA_NAME)).ok);
  });
});

Deno.test("handleRevocationRequest() answers an unknown, garbage, or expired token with nothing revoked", async () => {
  await withAuthParts(async (parts) => {
    const { client, tokens } = await signIn(parts);
    for (const token of ["no-such-token", "a.b.c", "e30.e30.e30", "x".repeat(5000)]) {
      assert.deepEqual(await revoke(parts, client, { token }), {});
    }
    parts.clock.advance(24 * 60 * 60_000 + 1);
    assert.deepEqual(await revoke(parts, client, { token: tokens.access_token }), {});
  });
});

Deno.test("handleRevocationRequest() authenticates the client as /token does, and charges a public client only once its token proves it", async () => {
  await withAuthParts(async (parts) => {
    const { client, secret } = await registerClient(parts, {
      token_endpoint_auth_method: "client_secret_basic",
    });
    const basic = (s: string) => `Basic ${btoa(`${client.clientId}:${s}`)}`;
    assert.deepEqual(await refusal(revoke(parts, client, { token: "t" }, basic("wrong"))), {
      error: "invalid_client",
      error_description: "the client secret is wrong",
    });
    assert.deepEqual(await revoke(parts, client, { token: "t" }, basic(secret!)), {});
    assert.deepEqual(
      await refusal(revoke(parts, client, { token: "t" })),
      {
        error: "invalid_client",
        error_description: "this client authenticates with client_secret_basic, not none",
      },
    );
    const charged: string[] = [];
    const { client: pub, tokens } = await signIn(parts);
    const count: Admit = (c) => void charged.push(c.clientId);
    await revoke(parts, pub, { token: "unknown" }, null, count);
    assert.deepEqual(charged, []);
    await revoke(parts, pub, { token: tokens.refresh_token! }, null, count);
    assert.deepEqual(charged, [pub.clientId]);
  });
});

Deno.test("handleRevocationRequest() refuses a hint naming no token type, and a missing token", async () => {
  await withAuthParts(async (parts) => {
    const { client, tokens } = await signIn(parts);
    assert.deepEqual(
      await refusal(revoke(parts, client, { token: tokens.access_token, token_type_hint: "id" })),
      {
        error: "unsupported_token_type",
        error_description:
          "token_type_hint id names no token Gatehouse issues; send access_token or refresh_token, or leave it out",
      },
    );
    assert.deepEqual(await refusal(revoke(parts, client, {})), {
      error: "invalid_request",
      error_description: "token is required",
    });
    assert.ok((await parts.verifier.verify(tokens.access_token, ALPHA_NAME)).ok);
  });
});
