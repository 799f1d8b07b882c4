/**
 * Revocation of a grant is final: a replayed refresh token that revokes its family while the
 * family's legitimate holder rotates it at the same moment leaves the family revoked, whichever
 * request the storage commits first. Runs through the real token endpoint, KV store and IdP.
 */
import assert from "node:assert/strict";
import { startOAuthGateway } from "./fixtures/oauth_gateway.ts";
import { exchangeCode, obtainCode, registerClient, token } from "./fixtures/oauth_raw.ts";
import { INIT, mcpHeaders, post } from "./fixtures/raw.ts";
import { UserAgent } from "./fixtures/user_agent.ts";

const ROUNDS = 20;

Deno.test("a replayed refresh token racing the legitimate rotation leaves the grant revoked, every time", async () => {
  // Each round ends in refused requests from this one address, by design; the limit on them
  // is tests/rate_limit_test.ts's subject, not this test's.
  const setup = await startOAuthGateway("rateLimits: { tokenFailuresPerAddress: off }\n");
  const base = setup.url;
  const alpha = `${base}/alpha`;
  const agent = new UserAgent();
  try {
    const client = await registerClient(base);
    const refresh = (refreshToken: string) =>
      token(base, {
        grant_type: "refresh_token",
        client_id: client.client_id,
        refresh_token: refreshToken,
      });
    const opens = async (accessToken: string) =>
      (await post(`${alpha}/mcp`, INIT, mcpHeaders({ authorization: `Bearer ${accessToken}` })))
        .status;

    const outcomes: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const code = (await obtainCode(agent, base, client.client_id, alpha)).get("code")!;
      const issued = (await exchangeCode(base, client.client_id, code)).json;
      assert.ok(issued.refresh_token, JSON.stringify(issued));
      // The first refresh token is rotated away: it is what an attacker who copied it replays.
      const rotated = await refresh(issued.refresh_token);
      assert.equal(rotated.status, 200, JSON.stringify(rotated.json));

      const [replay, rotation] = await Promise.all([
        refresh(issued.refresh_token),
        refresh(rotated.json.refresh_token),
      ]);
      assert.equal(replay.status, 400, `round ${round}: ${JSON.stringify(replay.json)}`);
      assert.equal(replay.json.error, "invalid_grant");
      assert.match(replay.json.error_description, /already used or revoked/);
      // The rotation may commit before the revocation (and is then revoked with the rest of
      // the grant) or after it (and is then refused); it never brings the grant back.
      if (rotation.status === 200) {
        outcomes.push("rotated first");
        const after = await refresh(rotation.json.refresh_token);
        assert.equal(
          after.status,
          400,
          `round ${round}: the refresh token the racing rotation issued still works, so the ` +
            `revoked grant is live again: ${JSON.stringify(after.json)}`,
        );
        assert.equal(after.json.error, "invalid_grant");
        assert.match(after.json.error_description, /already used or revoked/);
      } else {
        outcomes.push("refused");
        assert.equal(rotation.status, 400, `round ${round}: ${JSON.stringify(rotation.json)}`);
        assert.equal(rotation.json.error, "invalid_grant");
        assert.match(rotation.json.error_description, /revoked/);
      }
      const accessTokens = [
        issued.access_token,
        rotated.json.access_token,
        ...(rotation.status === 200 ? [rotation.json.access_token] : []),
      ];
      for (const [i, accessToken] of accessTokens.entries()) {
        assert.equal(
          await opens(accessToken),
          401,
          `round ${round}: access token ${i} of the revoked grant still opens alpha`,
        );
      }
    }
    console.log(`rotations racing a revocation: ${outcomes.join(", ")}`);
  } finally {
    await setup.close();
  }
});
