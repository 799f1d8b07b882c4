import assert from "node:assert/strict";
import type { ServerConfig } from "../config/types.ts";
import { Secret } from "../core/secret.ts";
import type { ServerName } from "../core/ids.ts";
import type { TokenCheck, TokenVerifier } from "../oauth/token_verifier.ts";
import { createAuthenticator } from "./bearer.ts";

const STATIC = "static-token-0123456789";
const JWT_SHAPED_STATIC = "aaaa.bbbb.cccc";

function server(): ServerConfig {
  return {
    name: "svc" as ServerName,
    public: false,
    serviceAuths: [{ type: "bearer", tokens: [new Secret(STATIC), new Secret(JWT_SHAPED_STATIC)] }],
  } as unknown as ServerConfig;
}

/** A verifier that knows one good token, as Gatehouse's own TokenVerifier would answer. */
const verifier = {
  verify: (token: string): Promise<TokenCheck> =>
    Promise.resolve(
      token === "good.jwt.token"
        ? {
          ok: true,
          claims: {
            sub: "alice",
            email: "alice@example.com",
            client_id: "c1",
            aud: [],
            scope: "",
            fam: "f",
          },
        }
        : { ok: false, description: "the access token's signature is invalid" },
    ),
} as unknown as TokenVerifier;

const call = (token?: string) =>
  new Request("http://gw/svc/mcp", token ? { headers: { authorization: `Bearer ${token}` } } : {});

Deno.test("createAuthenticator() accepts static tokens and Gatehouse JWTs, and says why it refuses", async () => {
  const auth = await createAuthenticator(server(), verifier);
  const staticResult = await auth.authenticate(call(STATIC), "127.0.0.1");
  assert.ok(staticResult.ok && staticResult.principal.id.startsWith("token:"));
  const shaped = await auth.authenticate(call(JWT_SHAPED_STATIC), "127.0.0.1");
  assert.ok(shaped.ok, "a static token that looks like a JWT still matches");
  const jwt = await auth.authenticate(call("good.jwt.token"), "127.0.0.1");
  assert.deepEqual(jwt, {
    ok: true,
    principal: { id: "alice", email: "alice@example.com", clientId: "c1" },
  });
  assert.deepEqual(await auth.authenticate(call("bad.jwt.token"), "127.0.0.1"), {
    ok: false,
    error: "invalid_token",
    description: "the access token's signature is invalid",
  });
  const wrong = await auth.authenticate(call("not-the-token"), "127.0.0.1");
  assert.ok(!wrong.ok && wrong.error === "invalid_token");
  const none = await auth.authenticate(call(), "127.0.0.1");
  assert.ok(!none.ok && none.error === "unauthorized");
});
