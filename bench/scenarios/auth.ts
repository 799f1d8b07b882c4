/**
 * What authenticating one MCP request costs, in process (no network, no scheduler noise): a
 * static bearer token (SHA-256 and a constant-time compare) against a Gatehouse access token
 * (the verified-token cache and the revocation cache, as on every request after the first),
 * and a JWT seen for the first time (HMAC verification). The end-to-end comparison is in
 * scenario 1; this says how much of it is the token itself.
 */
import { systemClock } from "../../src/core/clock.ts";
import process from "node:process";
import type { ServerConfig } from "../../src/config/types.ts";
import type { ServerName } from "../../src/core/ids.ts";
import { Secret } from "../../src/core/secret.ts";
import { deriveHmacKey } from "../../src/crypto/keys.ts";
import { createAuthenticator } from "../../src/http/bearer.ts";
import { AccessTokens } from "../../src/oauth/access_tokens.ts";
import { GrantStore } from "../../src/oauth/grants.ts";
import { serviceUri } from "../../src/oauth/services.ts";
import { TokenVerifier } from "../../src/oauth/token_verifier.ts";
import { Revocations } from "../../src/oauth/revocations.ts";
import { openKvStore } from "../../src/store/kv.ts";
import type { Results } from "../lib/report.ts";

const ROUNDS = 20_000;
const ISSUER = "http://127.0.0.1:8080";
const STATIC = "bench-static-token-0123456789abcdef";

export async function authCost(results: Results): Promise<void> {
  const store = await openKvStore(":memory:");
  const clock = systemClock;
  const key = await deriveHmacKey(
    new Secret("bench-master-secret-0123456789-abcdef"),
    "jwt-signing",
  );
  const accessTokens = new AccessTokens({ issuer: ISSUER, keys: [key], ttlMs: 3_600_000, clock });
  const grants = new GrantStore(store, clock, {
    codeMs: 60_000,
    refreshMs: 60_000,
    accessMs: 60_000,
  });
  const revocations = new Revocations({ store, clock });
  const verifier = new TokenVerifier({ issuer: ISSUER, accessTokens, grants, revocations, clock });
  const server = {
    name: "svc" as ServerName,
    public: false,
    serviceAuths: [{ type: "bearer", tokens: [new Secret(STATIC)], groups: [] }],
  } as unknown as ServerConfig;
  const auth = await createAuthenticator(server, verifier);
  // The grant the tokens come from, as the token endpoint makes it: a redeemed code (a token of
  // a grant the storage does not know is refused as revoked).
  const code = await grants.issueCode({
    clientId: "client-1",
    identity: { subject: "oidc:alice", email: "alice@example.com" },
    audience: [serviceUri(ISSUER, server.name)],
    scope: "mcp",
    redirectUri: "http://127.0.0.1/callback",
    codeChallenge: "unused-by-the-bench",
  });
  const redeemed = await grants.redeemCode(code);
  if (!redeemed.ok) throw new Error(`the bench's grant: ${redeemed.reason}`);
  const issue = () =>
    accessTokens.issue({
      subject: "oidc:alice",
      email: "alice@example.com",
      clientId: "client-1",
      audience: [serviceUri(ISSUER, server.name)],
      scope: "mcp",
      familyId: redeemed.familyId,
    });
  const jwt = await issue();
  const request = (token: string) =>
    new Request(`${ISSUER}/svc/mcp`, { headers: { authorization: `Bearer ${token}` } });
  const measure = async (label: string, token: () => string | Promise<string>) => {
    const tokens = await Promise.all(Array.from({ length: ROUNDS }, token));
    const requests = tokens.map(request);
    for (const r of requests.slice(0, 1000)) await auth.authenticate(r, "127.0.0.1");
    const before = process.cpuUsage();
    for (const r of requests) {
      const result = await auth.authenticate(r, "127.0.0.1");
      if (!result.ok) throw new Error(`${label}: ${result.description}`);
    }
    const used = process.cpuUsage(before);
    results.add({
      scenario: "1a authentication, in process",
      case: label,
      value: (used.user + used.system) / ROUNDS,
      unit: "µs/request",
    });
  };
  try {
    await measure("static bearer token", () => STATIC);
    await measure("Gatehouse JWT, seen before", () => jwt);
    await measure("Gatehouse JWT, first time (HMAC)", issue);
  } finally {
    store.close();
  }
}
