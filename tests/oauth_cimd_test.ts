/**
 * Client ID metadata documents (MCP 2025-11-25): the SDK client names itself by an https URL
 * served by the test; the gateway fetches it through its SSRF guard. The gateway runs as its
 * own process so it can trust the test's certificate authority (DENO_CERT).
 */
import assert from "node:assert/strict";
import { connectWithOAuth, MemoryOAuthProvider, REDIRECT_URI } from "./fixtures/oauth_client.ts";
import { authorizeParams } from "./fixtures/oauth_raw.ts";
import { startGatewayProcess } from "./fixtures/gateway_process.ts";
import { startIdp } from "./fixtures/idp.ts";
import { startRelay } from "./fixtures/ports.ts";
import { cimdGatewayYaml, startDocumentServer } from "./fixtures/cimd_documents.ts";
import { UserAgent } from "./fixtures/user_agent.ts";
import { waitUntil } from "./fixtures/waits.ts";

Deno.test("CIMD: the SDK client's URL client_id works; loopback, redirects and mismatches are refused", async () => {
  const documents = await startDocumentServer((url, self) => {
    const document = {
      client_id: self,
      client_name: "CIMD test client",
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
    if (url.pathname === "/client.json") {
      return Response.json(document, { headers: { "cache-control": "max-age=600" } });
    }
    if (url.pathname === "/moved.json") {
      return new Response(null, { status: 302, headers: { location: "/client.json" } });
    }
    if (url.pathname === "/liar.json") {
      return Response.json({ ...document, client_id: "https://somebody-else.example/c.json" });
    }
    return new Response("not found", { status: 404 });
  });
  // The process is started behind a relay, whose address the identity provider knows first.
  const relay = startRelay();
  const idp = await startIdp([`${relay.url}/oauth/callback`]);
  const gateway = await startGatewayProcess(cimdGatewayYaml(relay.url, idp), {
    DENO_CERT: documents.certFile,
  });
  relay.forwardTo(gateway.port);
  const url = relay.url;
  try {
    const docs = documents.origin;
    const provider = new MemoryOAuthProvider(`${docs}/client.json`);
    const { client } = await connectWithOAuth(
      new UserAgent(),
      `${url}/alpha/mcp`,
      provider,
    );
    assert.equal(provider.clientInfo?.client_id, `${docs}/client.json`, "no registration happened");
    const result = await client.callTool({ name: "echo", arguments: { via: "cimd" } });
    assert.deepEqual(result.content, [{ type: "text", text: '{"via":"cimd"}' }]);
    await client.close();
    assert.equal(
      documents.fetched.filter((p) => p === "/client.json").length,
      1,
      "cached by max-age",
    );

    const refused = async (clientId: string) => {
      const params = await authorizeParams(clientId, {}, `${url}/alpha`);
      const response = await fetch(`${url}/authorize?${params}`, { redirect: "manual" });
      assert.equal(response.headers.get("location"), null, "never redirected");
      return { status: response.status, body: await response.text() };
    };
    // Why a document could not be fetched goes to the log only: the page says the same for a
    // non-public address, a name that does not resolve, a closed port, a redirect and a 404, so
    // /authorize tells a stranger nothing of the gateway's network.
    const closed = await new Promise<number>((resolve) => {
      const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      const { port } = probe.addr as Deno.NetAddr;
      probe.close();
      resolve(port);
    });
    const failures: [string, RegExp][] = [
      [`https://127.0.0.1:${documents.port}/client.json`, /non-public address 127\.0\.0\.1/],
      ["https://10.0.0.7/client.json", /non-public address 10\.0\.0\.7/],
      ["https://does-not-resolve.invalid/client.json", /does not resolve/],
      [`https://localhost:${closed}/client.json`, /refused|connect/i],
      [`${docs}/moved.json`, /redirect \(302\), which is not followed/],
      [`${docs}/missing.json`, /answered 404/],
    ];
    for (const [clientId, cause] of failures) {
      const page = await refused(clientId);
      assert.equal(page.status, 400, clientId);
      assert.match(page.body, /the client&#39;s metadata document could not be fetched/, clientId);
      assert.doesNotMatch(page.body, cause, clientId);
      const shown = page.body.replace(/<style[\s\S]*?<\/style>/g, "");
      assert.doesNotMatch(shown, /127\.0\.0\.1|10\.0\.0\.7|resolve|refused|redirect|404/);
      await waitUntil(
        `the log line saying why ${clientId} could not be fetched`,
        () =>
          gateway.logs().split("\n").some((line) =>
            line.includes("an authorization request was refused") && line.includes(clientId) &&
            cause.test(line)
          ),
      );
    }
    // A document that was fetched but is wrong is the client's own to fix: it is named.
    const liar = await refused(`${docs}/liar.json`);
    assert.match(liar.body, /client_id does not equal its URL/);
  } finally {
    await gateway.close();
    await relay.close();
    await idp.close();
    await documents.close();
  }
});
