/**
 * An approval page's address names an approval by its id, and nothing but such an id goes further:
 * a path that is no approval id (a CR LF in it above all, which once reached the sign-in's return
 * path and answered 500) is "no such approval", before any sign-in. Real parts: the gateway with an
 * approvals: rule, its HTTP routes.
 */
import assert from "node:assert/strict";
import { FIXTURE_STDIO, startGateway } from "./fixtures/gateway.ts";
import { TEST_MASTER_SECRET } from "./fixtures/oauth_gateway.ts";

Deno.test("an approval page of an id that is no approval id is 404 before any sign-in, GET and POST alike", async () => {
  const gw = await startGateway(`
secret: ${TEST_MASTER_SECRET}
servers:
  files:
    transport: stdio
    ${FIXTURE_STDIO}
    approvals:
      - tools: [echo]
        by: caller
oauth:
  idp: { provider: oidc, issuer: "https://login.example.com", clientId: gatehouse, clientSecret: s }
  allow: { domains: [example.com] }
`);
  try {
    for (
      const id of [
        "%0D%0ALocation:%20https://evil.example",
        "..%2F..%2Fmy",
        "a".repeat(44),
        "short",
      ]
    ) {
      const page = await fetch(`${gw.url}/approvals/${id}`, { redirect: "manual" });
      assert.equal(page.status, 404, `GET ${id}`);
      assert.equal(page.headers.get("location"), null, `GET ${id}`);
      // The route's own page, or the route table's 404 where the path is no route at all.
      assert.match(await page.text(), /No such approval|no such endpoint/, `GET ${id}`);
      const post = await fetch(`${gw.url}/approvals/${id}`, {
        method: "POST",
        redirect: "manual",
        headers: { origin: gw.url, "content-type": "application/x-www-form-urlencoded" },
        body: "decision=approve",
      });
      assert.equal(post.status, 404, `POST ${id}`);
      await post.body?.cancel();
    }
  } finally {
    await gw.close();
  }
});
