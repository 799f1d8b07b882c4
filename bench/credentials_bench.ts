/**
 * The cost per-person credentials add to a request: the person's token as a session's
 * backend asks for it, from the in-memory cache (the common case) and from the vault
 * (a KV read and an AES-GCM open, once per person and service every 5 s).
 */
import { testClock } from "../tests/fixtures/clock.ts";
import { Secret } from "../src/core/secret.ts";
import { deriveAesKey } from "../src/crypto/keys.ts";
import { UserCredentials } from "../src/credentials/user_credentials.ts";
import { CredentialVault } from "../src/credentials/vault.ts";
import type { ServerConfig } from "../src/config/types.ts";
import { createLogger } from "../src/observability/logger.ts";
import { openKvStore } from "../src/store/kv.ts";

const ROUNDS = 20_000;
const store = await openKvStore(":memory:");
const key = await deriveAesKey(
  new Secret("bench-secret-0123456789-abcdefghijklmnop"),
  "vault-encryption",
);
const clock = testClock();
clock.freeze();
const servers = new Map<string, ServerConfig>([["notion", {
  name: "notion",
  transport: "stdio",
  command: "x",
  args: [],
  env: { T: "{{user.token}}" },
  public: false,
  serviceAuths: [],
  userToken: { kind: "manual", displayName: "Notion" },
} as unknown as ServerConfig]]);
const credentials = new UserCredentials({
  baseUrl: "https://gw.example.com",
  servers,
  vault: new CredentialVault(store, [key]),
  clock,
  logger: createLogger("error", () => {}),
  oauthClients: new Map(),
});
await credentials.setManual("oidc:alice", "notion", "ntn_alice_0123456789abcdef");

async function perCall(label: string, step: () => void) {
  for (let i = 0; i < 1_000; i++) await credentials.tokenFor("oidc:alice", "notion");
  const start = performance.now();
  for (let i = 0; i < ROUNDS; i++) {
    step();
    await credentials.tokenFor("oidc:alice", "notion");
  }
  const us = (performance.now() - start) / ROUNDS * 1000;
  console.log(`${label}\t${us.toFixed(2)} µs/call`);
}

console.log(`per-person token lookup, ${ROUNDS} calls each`);
await perCall("cached (within 5 s)", () => {});
// Moving the clock past the cache lifetime on every call forces the vault path.
await perCall("vault (KV read + AES-GCM open)", () => clock.advance(6_000));
store.close();
