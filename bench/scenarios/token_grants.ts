/**
 * What the token endpoint's grants cost, in process (no HTTP, no scheduler noise): the code
 * flow's authorization_code grant (a code redeemed, PKCE checked, a grant opened, an access and
 * a refresh token issued) beside the jwt-bearer grant with an ID-JAG (a confidential client's
 * secret checked, the assertion's signature verified with the issuer's cached key, its checks,
 * the jti recorded and the grant opened in one write, an access token issued). Calls one after
 * the other on Deno KV in memory: tokens per second and the median call.
 */
import * as jose from "jose";
import {
  ALPHA,
  codeForm,
  exchange,
  issueCode,
  ISSUER,
  openAuthParts,
  registerClient,
} from "../../tests/fixtures/auth_parts.ts";
import { IssuerKeys } from "../../src/oauth/issuer_keys.ts";
import { JWT_BEARER } from "../../src/oauth/metadata.ts";
import type { Results } from "../lib/report.ts";
import { timeCalls } from "../lib/timing.ts";

const IDP = "https://login.example.com";
const SECRET = "bench-confidential-secret-0123456789abcdef";

async function timed(
  results: Results,
  label: string,
  calls: number,
  call: (i: number) => Promise<unknown>,
): Promise<void> {
  for (let i = 0; i < Math.min(200, calls / 10); i++) await call(calls + i); // warm-up
  results.add({
    scenario: "13 token grants, in process",
    case: label,
    ...(await timeCalls(calls, call)),
  });
}

export async function tokenGrants(results: Results, calls: number): Promise<void> {
  const rounds = Math.min(calls, 2_000);
  const parts = await openAuthParts();
  try {
    // The code flow: each call redeems a code issued beforehand (issuing is the consent step's).
    const { client: publicClient } = await registerClient(parts);
    const codes = await Promise.all(
      Array.from({ length: rounds + 200 }, () => issueCode(parts, publicClient)),
    );
    await timed(
      results,
      "authorization_code (code flow, with refresh token)",
      rounds,
      (i) => exchange(parts, codeForm(publicClient, codes[i % codes.length])),
    );

    for (const alg of ["ES256", "RS256"]) {
      const { privateKey, publicKey } = await jose.generateKeyPair(alg, { extractable: true });
      const jwk = { ...(await jose.exportJWK(publicKey)), kid: "k1" };
      const { client } = await registerClient(parts, {
        grant_types: [JWT_BEARER],
        redirect_uris: [],
        token_endpoint_auth_method: "client_secret_basic",
      });
      const registered = await parts.clients.find(client.clientId);
      // The registration's own secret is random; the bench needs one it knows.
      const { sha256Base64Url } = await import("../../src/crypto/base64url.ts");
      await parts.store.set(["oauth", "client", client.clientId], {
        ...registered,
        clientSecretHash: await sha256Base64Url(SECRET),
        expiresAt: undefined,
      });
      parts.tokenDeps.jwtBearer = {
        policy: { audience: ISSUER, trustedIssuers: [IDP], maxLifetimeMs: 600_000 },
        keys: new IssuerKeys(() => Promise.resolve({ keys: [jwk] }), parts.clock),
        clock: parts.clock,
        grants: parts.grants,
        login: { issuer: IDP, kind: "oidc" },
        groupsAtLastLogin: () => Promise.resolve(undefined),
        rememberGroups: () => Promise.resolve(),
        onOutcome: () => {},
      };
      const now = Math.floor(parts.clock.now() / 1000);
      const assertions = await Promise.all(
        Array.from({ length: rounds + 200 }, () =>
          new jose.SignJWT({
            iss: IDP,
            sub: "alice",
            aud: ISSUER,
            client_id: client.clientId,
            jti: crypto.randomUUID(),
            iat: now,
            exp: now + 300,
            resource: ALPHA,
            scope: "mcp",
            email: "alice@example.com",
          }).setProtectedHeader({ alg, typ: "oauth-id-jag+jwt", kid: "k1" }).sign(privateKey)),
      );
      const basic = `Basic ${btoa(`${client.clientId}:${SECRET}`)}`;
      await timed(results, `jwt-bearer (ID-JAG ${alg}, no refresh token)`, rounds, (i) =>
        exchange(
          parts,
          new URLSearchParams({
            grant_type: JWT_BEARER,
            assertion: assertions[i % assertions.length],
          }),
          undefined,
          basic,
        ));
    }
  } finally {
    parts.close();
  }
}
