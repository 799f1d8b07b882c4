import assert from "node:assert/strict";
import {
  admitAll,
  ALPHA,
  ALPHA_NAME,
  BETA,
  BETA_NAME,
  CHALLENGE,
  codeForm,
  exchange,
  issueCode,
  LIFETIMES,
  REDIRECT,
  refreshForm,
  refusal,
  registerClient,
  signIn,
  VERIFIER,
  withAuthParts,
} from "../../tests/fixtures/auth_parts.ts";
import { OAuthError } from "./errors.ts";
import type { Admit } from "./token.ts";
import { Revocations } from "./revocations.ts";
import { TokenVerifier } from "./token_verifier.ts";

const REPLAYED = {
  error: "invalid_grant",
  error_description:
    "the authorization code was already used; the tokens issued for it are revoked",
};
const REFRESH_REVOKED = {
  error: "invalid_grant",
  error_description:
    "the refresh token was already used or revoked; every token of this grant is revoked",
};
const GRANT_REVOKED = {
  ok: false,
  description: "this grant was revoked: sign in again through your MCP client",
};

Deno.test("handleTokenRequest() exchanges a code for an access token for its audience and a refresh token", async () => {
  await withAuthParts(async (parts) => {
    const { client, tokens } = await signIn(parts);
    assert.equal(tokens.token_type, "Bearer");
    assert.equal(tokens.expires_in, LIFETIMES.accessMs / 1000);
    assert.equal(tokens.scope, "mcp");
    assert.equal(typeof tokens.refresh_token, "string");
    const check = await parts.verifier.verify(tokens.access_token, ALPHA_NAME);
    assert.ok(check.ok);
    assert.equal(check.claims.sub, "oidc:alice");
    assert.equal(check.claims.email, "alice@example.com");
    assert.equal(check.claims.client_id, client.clientId);
    assert.deepEqual(check.claims.aud, [ALPHA]);
  });
});

Deno.test("handleTokenRequest() refuses a second exchange of a code with invalid_grant and revokes what the first one issued", async () => {
  await withAuthParts(async (parts) => {
    const { client } = await registerClient(parts);
    const code = await issueCode(parts, client);
    const first = await exchange(parts, codeForm(client, code));
    assert.ok((await parts.verifier.verify(first.access_token, ALPHA_NAME)).ok);

    assert.deepEqual(await refusal(exchange(parts, codeForm(client, code))), REPLAYED);
    assert.deepEqual(
      await refusal(exchange(parts, refreshForm(client, first.refresh_token!))),
      REFRESH_REVOKED,
    );
    // This replica revoked it: refused at once. Another replica that has not seen the token
    // yet (its own revocations, not polled since) reads the grant once and refuses it too.
    assert.deepEqual(await parts.verifier.verify(first.access_token, ALPHA_NAME), GRANT_REVOKED);
    const elsewhere = new TokenVerifier({
      issuer: parts.issuer,
      accessTokens: parts.accessTokens,
      grants: parts.grants,
      revocations: new Revocations({ store: parts.store, clock: parts.clock }),
      clock: parts.clock,
    });
    assert.deepEqual(await elsewhere.verify(first.access_token, ALPHA_NAME), GRANT_REVOKED);
  });
});

Deno.test("handleTokenRequest() accepts a code just before it expires and refuses it at that instant", async () => {
  await withAuthParts(async (parts) => {
    const { client } = await registerClient(parts);
    const early = await issueCode(parts, client);
    const late = await issueCode(parts, client);
    parts.clock.advance(LIFETIMES.codeMs - 1);
    await exchange(parts, codeForm(client, early));
    parts.clock.advance(1);
    assert.deepEqual(await refusal(exchange(parts, codeForm(client, late))), {
      error: "invalid_grant",
      error_description: "the authorization code has expired; start the authorization again",
    });
  });
});

Deno.test("handleTokenRequest() refuses a code_verifier that does not match the S256 challenge and uses the code up", async () => {
  await withAuthParts(async (parts) => {
    const { client } = await registerClient(parts);
    const code = await issueCode(parts, client);
    const wrongVerifier = VERIFIER.slice(0, -1) + (VERIFIER.endsWith("k") ? "j" : "k");
    assert.deepEqual(
      await refusal(exchange(parts, codeForm(client, code, { code_verifier: wrongVerifier }))),
      {
        error: "invalid_grant",
        error_description: "the code_verifier does not match the code_challenge",
      },
    );
    // An attacker who saw the code cannot try again, nor can the client.
    assert.deepEqual(await refusal(exchange(parts, codeForm(client, code))), REPLAYED);
  });
});

Deno.test("handleTokenRequest() refuses the challenge itself as the verifier (a downgrade to plain PKCE)", async () => {
  await withAuthParts(async (parts) => {
    const { client } = await registerClient(parts);
    const code = await issueCode(parts, client);
    assert.deepEqual(
      await refusal(exchange(parts, codeForm(client, code, { code_verifier: CHALLENGE }))),
      {
        error: "invalid_grant",
        error_description: "the code_verifier does not match the code_challenge",
      },
    );
  });
});

Deno.test("handleTokenRequest() refuses a request without code_verifier and leaves the code usable", async () => {
  await withAuthParts(async (parts) => {
    const { client } = await registerClient(parts);
    const code = await issueCode(parts, client);
    const form = codeForm(client, code);
    form.delete("code_verifier");
    assert.deepEqual(await refusal(exchange(parts, form)), {
      error: "invalid_request",
      error_description: "code_verifier is required",
    });
    assert.ok((await exchange(parts, codeForm(client, code))).access_token);
  });
});

Deno.test("handleTokenRequest() refuses a redirect_uri other than the authorization request's", async () => {
  await withAuthParts(async (parts) => {
    const { client } = await registerClient(parts);
    const code = await issueCode(parts, client);
    const form = codeForm(client, code, { redirect_uri: `${REDIRECT}/elsewhere` });
    assert.deepEqual(await refusal(exchange(parts, form)), {
      error: "invalid_grant",
      error_description: "redirect_uri differs from the one in the authorization request",
    });
  });
});

Deno.test("handleTokenRequest() refuses a code issued to another client and revokes its grant", async () => {
  await withAuthParts(async (parts) => {
    const { client: victim } = await registerClient(parts);
    const { client: attacker } = await registerClient(parts);
    const code = await issueCode(parts, victim);
    assert.deepEqual(await refusal(exchange(parts, codeForm(attacker, code))), {
      error: "invalid_grant",
      error_description: "the authorization code was issued to another client",
    });
    assert.deepEqual(await refusal(exchange(parts, codeForm(victim, code))), REPLAYED);
  });
});

Deno.test("handleTokenRequest() narrows the access token's audience to the resource asked for, and the refresh token keeps the grant's", async () => {
  await withAuthParts(async (parts) => {
    const { client } = await registerClient(parts);
    const code = await issueCode(parts, client, { audience: [ALPHA, BETA] });
    // The endpoint URL form names the same service (RFC 8707 clients often send it).
    const tokens = await exchange(parts, codeForm(client, code, { resource: `${ALPHA}/mcp` }));
    assert.ok((await parts.verifier.verify(tokens.access_token, ALPHA_NAME)).ok);
    assert.deepEqual(await parts.verifier.verify(tokens.access_token, BETA_NAME), {
      ok: false,
      description: `the access token is not valid for ${BETA}; obtain a token for this service`,
    });
    const form = refreshForm(client, tokens.refresh_token!);
    form.append("resource", BETA);
    const refreshed = await exchange(parts, form);
    assert.ok((await parts.verifier.verify(refreshed.access_token, BETA_NAME)).ok);
    assert.equal((await parts.verifier.verify(refreshed.access_token, ALPHA_NAME)).ok, false);
  });
});

Deno.test("handleTokenRequest() refuses with invalid_target a resource the grant does not hold", async () => {
  await withAuthParts(async (parts) => {
    const { client, tokens } = await signIn(parts, [ALPHA]);
    const widen = refreshForm(client, tokens.refresh_token!);
    widen.append("resource", BETA);
    assert.deepEqual(await refusal(exchange(parts, widen)), {
      error: "invalid_target",
      error_description: `the resource ${BETA} was not granted to this authorization`,
    });
    const code = await issueCode(parts, client, { audience: [ALPHA] });
    const foreign = codeForm(client, code, { resource: "https://evil.example.com/alpha" });
    assert.deepEqual(await refusal(exchange(parts, foreign)), {
      error: "invalid_target",
      error_description:
        "the resource https://evil.example.com/alpha was not granted to this authorization",
    });
    // A refused widening used nothing up: the refresh token still rotates.
    assert.ok(await exchange(parts, refreshForm(client, tokens.refresh_token!)));
  });
});

Deno.test("handleTokenRequest() refuses grant types other than authorization_code and refresh_token", async () => {
  await withAuthParts(async (parts) => {
    const form = new URLSearchParams({ grant_type: "password", username: "a", password: "b" });
    assert.deepEqual(await refusal(exchange(parts, form)), {
      error: "unsupported_grant_type",
      error_description:
        "grant_type password is not supported; use authorization_code or refresh_token",
    });
  });
});

Deno.test("handleTokenRequest() refuses a repeated parameter", async () => {
  await withAuthParts(async (parts) => {
    const { client } = await registerClient(parts);
    const code = await issueCode(parts, client);
    const form = codeForm(client, code);
    form.append("code", code);
    assert.deepEqual(await refusal(exchange(parts, form)), {
      error: "invalid_request",
      error_description: "the code parameter is repeated",
    });
  });
});

Deno.test("handleTokenRequest() authenticates a confidential client by its secret, one method at a time", async () => {
  await withAuthParts(async (parts) => {
    const { client, secret } = await registerClient(parts, {
      token_endpoint_auth_method: "client_secret_basic",
    });
    const basic = (id: string, password: string) => `Basic ${btoa(`${id}:${password}`)}`;
    const form = () => codeForm(client, "irrelevant");
    assert.deepEqual(
      await refusal(exchange(parts, form(), admitAll, basic(client.clientId, "wrong"))),
      { error: "invalid_client", error_description: "the client secret is wrong" },
    );
    assert.deepEqual(await refusal(exchange(parts, form())), {
      error: "invalid_client",
      error_description: "this client authenticates with client_secret_basic, not none",
    });
    const both = codeForm(client, "irrelevant", { client_secret: secret! });
    assert.deepEqual(
      await refusal(exchange(parts, both, admitAll, basic(client.clientId, secret!))),
      {
        error: "invalid_request",
        error_description: "use one client authentication method, not two",
      },
    );
    const code = await issueCode(parts, client);
    const tokens = await exchange(
      parts,
      codeForm(client, code),
      admitAll,
      basic(client.clientId, secret!),
    );
    assert.ok((await parts.verifier.verify(tokens.access_token, ALPHA_NAME)).ok);
  });
});

Deno.test("handleTokenRequest() refuses a secret from a public client and an unknown client_id", async () => {
  await withAuthParts(async (parts) => {
    const { client } = await registerClient(parts);
    const code = await issueCode(parts, client);
    assert.deepEqual(
      await refusal(exchange(parts, codeForm(client, code, { client_secret: "guess" }))),
      {
        error: "invalid_client",
        error_description: "this client authenticates with none, not client_secret_post",
      },
    );
    const unknown = codeForm(client, code, { client_id: "gh_unknownclient000000000" });
    assert.deepEqual(await refusal(exchange(parts, unknown)), {
      error: "invalid_client",
      error_description: "the client is unknown or has expired",
    });
  });
});

Deno.test("handleTokenRequest() lets a public client over its limit keep its code, and never charges a request that does not prove itself", async () => {
  await withAuthParts(async (parts) => {
    const { client } = await registerClient(parts);
    const code = await issueCode(parts, client);
    const limited: Admit = () => {
      throw new OAuthError("temporarily_unavailable", "too many token requests; try later");
    };
    assert.deepEqual(await refusal(exchange(parts, codeForm(client, code), limited)), {
      error: "temporarily_unavailable",
      error_description: "too many token requests; try later",
    });
    let charged = 0;
    const counting: Admit = () => void charged++;
    const other = await issueCode(parts, client);
    const wrong = codeForm(client, other, { code_verifier: "x".repeat(43) });
    assert.equal((await refusal(exchange(parts, wrong, counting))).error, "invalid_grant");
    assert.equal(charged, 0, "a request without the verifier is not counted against the client");
    assert.ok(await exchange(parts, codeForm(client, code), counting));
    assert.equal(charged, 1);
  });
});
