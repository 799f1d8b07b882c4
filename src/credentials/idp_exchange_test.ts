import assert from "node:assert/strict";
import type { ExchangeUserToken } from "../config/types.ts";
import { Secret } from "../core/secret.ts";
import { deriveAesKey } from "../crypto/keys.ts";
import { IdpError } from "../idp/provider.ts";
import { createLogger } from "../observability/logger.ts";
import { openKvStore } from "../store/kv.ts";
import { testClock } from "../../tests/fixtures/clock.ts";
import { ExchangeUnavailableError, type IdpExchanger, TokenExchange } from "./idp_exchange.ts";
import { IdpTokenVault } from "./idp_token_vault.ts";

const spec = (audience: string): ExchangeUserToken => ({
  kind: "exchange",
  displayName: audience,
  audience,
  scopes: [],
});

Deno.test("TokenExchange: backends waiting for one person's expired IdP token share one refresh, also when the IdP cannot be reached", async () => {
  let renewals = 0;
  const gate = Promise.withResolvers<void>();
  const provider: IdpExchanger = {
    renew: async () => {
      renewals++;
      await gate.promise;
      throw new IdpError("unreachable", "the test IdP timed out");
    },
    exchange: () => Promise.reject(new Error("not reached")),
  };
  const store = await openKvStore(":memory:");
  const clock = testClock();
  clock.freeze();
  try {
    const vault = new IdpTokenVault({
      store,
      clock,
      keys: [
        await deriveAesKey(new Secret("idp-exchange-test-secret-0123456789-ab"), "idp-tokens"),
      ],
      keepMs: 24 * 60 * 60_000,
    });
    const logger = createLogger("error", () => {});
    const exchange = new TokenExchange({
      vault,
      provider,
      clock,
      logger,
      auditLogger: logger,
      pageUrl: "http://gateway.test/my/access",
    });
    await vault.keep("oidc:alice", {
      accessToken: "idp-access",
      accessExpiresAt: clock.now() - 1,
      refreshToken: "idp-refresh",
      obtainedAt: 0,
    });
    let reads = 0;
    const read = vault.read.bind(vault);
    vault.read = async (subject) => {
      const kept = await read(subject);
      reads++;
      return kept;
    };
    // Each waits out the provider's timeout once, not once per backend before it.
    const calls = ["ledger", "vault", "books"].map((server) =>
      exchange.tokenFor("oidc:alice", server, spec(`${server}-api`))
    );
    for (let turn = 0; reads < 3 || renewals < 1; turn++) {
      assert.ok(turn < 1000, "the three calls never read the kept tokens and asked the IdP");
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    await new Promise((resolve) => setTimeout(resolve, 0));
    gate.resolve();
    for (const settled of await Promise.allSettled(calls)) {
      assert.ok(
        settled.status === "rejected" && settled.reason instanceof ExchangeUnavailableError,
      );
    }
    assert.equal(renewals, 1);
  } finally {
    store.close();
  }
});
