/**
 * The jwt-bearer grant under attack, against a running gateway and the test IdP's real keys:
 * headers that ask the verifier to trust something else (`crit`, embedded `jwk`, `jku`, `x5u`),
 * issuer spellings, oversized assertions and bodies, client authentication sent twice or
 * malformed, and what reaches the gateway's log lines.
 */
import assert from "node:assert/strict";
import * as jose from "jose";
import {
  claimsFor,
  GW_CLIENT,
  GW_SECRET,
  present,
  startJwtBearerGateway,
} from "./fixtures/jwt_bearer_gateway.ts";
import { jwtClaims } from "./fixtures/oauth_raw.ts";

const start = () => startJwtBearerGateway();

/** A server that counts the requests it gets: a `jku`/`x5u` the gateway must never fetch. */
function countingServer(): { url: string; hits: () => number; close: () => Promise<void> } {
  let hits = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () => {
    hits++;
    return Response.json({ keys: [] });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    hits: () => hits,
    close: () => server.shutdown(),
  };
}

Deno.test("ID-JAG attacks: a crit header the gateway does not understand is refused (RFC 7515 §4.1.11)", async () => {
  const { setup, keys } = await start();
  try {
    const key = keys.current;
    // The IdP's own key signs it: only the header's demand that the recipient understand an
    // extension (here one that would limit where the token may be used) is wrong.
    const withCrit = await new jose.CompactSign(
      new TextEncoder().encode(JSON.stringify(claimsFor(setup))),
    ).setProtectedHeader({
      alg: key.alg,
      typ: "oauth-id-jag+jwt",
      kid: key.kid,
      crit: ["https://idp.example/only-for"],
      "https://idp.example/only-for": "another-gateway",
    }).sign(key.privateKey, { crit: { "https://idp.example/only-for": true } });
    assert.deepEqual(await present(setup, withCrit), {
      status: 400,
      body: {
        error: "invalid_grant",
        error_description:
          "the assertion's header names critical extensions (crit) this gateway does not understand",
      },
    });
    // The same claims without crit are fine: the refusal was the header's alone.
    assert.equal((await present(setup, await keys.sign(claimsFor(setup)))).status, 200);
  } finally {
    await setup.close();
  }
});

Deno.test("ID-JAG attacks: keys the assertion carries or points to are never used nor fetched", async () => {
  const { setup, keys } = await start();
  const lure = countingServer();
  try {
    const attacker = await jose.generateKeyPair("RS256", { extractable: true });
    const attackerJwk = await jose.exportJWK(attacker.publicKey);
    const forged = (header: Record<string, unknown>) =>
      new jose.SignJWT(claimsFor(setup)).setProtectedHeader({
        alg: "RS256",
        typ: "oauth-id-jag+jwt",
        ...header,
      }).sign(attacker.privateKey);
    const headers: Record<string, unknown>[] = [
      { jwk: attackerJwk },
      { jku: `${lure.url}/jwks` },
      { jku: `${lure.url}/jwks`, kid: "attacker-1" },
      { x5u: `${lure.url}/cert.pem` },
      { kid: keys.current.kid, jwk: attackerJwk },
    ];
    for (const header of headers) {
      const { status, body } = await present(setup, await forged(header));
      assert.equal(status, 400, JSON.stringify(header));
      assert.equal(body.error, "invalid_grant");
      assert.match(String(body.error_description), /signature/, JSON.stringify(header));
    }
    assert.equal(lure.hits(), 0, "no jku or x5u was fetched");
    // Their audit lines say that the subject they name is only what the sender wrote: anyone
    // can put a colleague's name in an assertion that was never going to verify.
    const audits = setup.gw.logs.map((line) => JSON.parse(line)).filter((l) =>
      l.event === "id_jag"
    );
    assert.equal(audits.length, headers.length);
    for (const audit of audits) {
      assert.equal(audit.check, "signature");
      assert.equal(audit.sub, "alice-example-com");
      assert.equal(audit.verified, false);
    }
    // After the signature, what the audit names is the IdP's word.
    const late = await present(setup, await keys.sign(claimsFor(setup, { aud: "https://x" })));
    assert.equal(late.status, 400);
    const lateAudit = JSON.parse(setup.gw.logs.findLast((l) => l.includes('"id_jag"'))!);
    assert.equal(lateAudit.check, "aud");
    assert.equal(lateAudit.verified, true);
    // The issuer's name spelled otherwise is another issuer, refused before any key is looked up.
    const issuer = setup.idp.issuer;
    for (const iss of [`${issuer}/`, issuer.toUpperCase(), ` ${issuer}`, [issuer]]) {
      const { body } = await present(setup, await keys.sign(claimsFor(setup, { iss })));
      assert.equal(
        body.error_description,
        "the assertion's issuer (iss) is not a trusted ID-JAG issuer",
        JSON.stringify(iss),
      );
    }
  } finally {
    await lure.close();
    await setup.close();
  }
});

Deno.test("ID-JAG attacks: size bounds, client authentication sent twice or malformed, and no secret or assertion in the logs", async () => {
  const { setup, keys } = await start();
  try {
    // An assertion over the bound is refused before it is parsed; a body over 64 KiB before
    // it is read whole.
    const huge = `${"a".repeat(20_000)}.${"b".repeat(20_000)}.c`;
    assert.deepEqual((await present(setup, huge)).body, {
      error: "invalid_grant",
      error_description: "the assertion is not a JWT: it is longer than 16384 characters",
    });
    const tooBig = await present(setup, "x".repeat(70_000));
    assert.deepEqual(tooBig, {
      status: 400,
      body: { error: "invalid_request", error_description: "the body is larger than 65536 bytes" },
    });
    // Two client authentications at once, and a Basic header that decodes to another client.
    const good = await keys.sign(claimsFor(setup));
    const twice = await present(setup, good, { client_secret: GW_SECRET });
    assert.deepEqual(twice.body, {
      error: "invalid_request",
      error_description: "use one client authentication method, not two",
    });
    const other = await present(setup, good, { client_id: "someone-else" });
    assert.equal(other.status, 401);
    for (const header of ["Basic !!!not-base64", `Basic ${btoa(`:${GW_SECRET}`)}`]) {
      const { status, body } = await present(setup, good, {}, header);
      assert.equal(status, 401, header);
      assert.equal(body.error, "invalid_client");
    }
    // The configured client authenticates with client_secret_basic: the same secret in the
    // form is refused, so a method the operator did not choose is not a second way in.
    const posted = await present(
      setup,
      good,
      { client_id: GW_CLIENT, client_secret: GW_SECRET },
      "",
    );
    assert.equal(posted.status, 401);
    // After all that, the assertion is still good: nothing above used its jti up.
    const issued = await present(setup, good, { scope: "mcp admin mcp", refresh_token: "x" });
    assert.equal(issued.status, 200, JSON.stringify(issued.body));
    assert.equal(issued.body.scope, "mcp");
    assert.equal(issued.body.refresh_token, undefined);
    assert.deepEqual(jwtClaims(issued.body.access_token as string).aud, [`${setup.url}/alpha`]);
    const logs = setup.gw.logs.join("\n");
    for (const secret of [GW_SECRET, btoa(`${GW_CLIENT}:${GW_SECRET}`), good.split(".")[1]]) {
      assert.ok(!logs.includes(secret), "no secret, Basic credential or assertion in the logs");
    }
  } finally {
    await setup.close();
  }
});
