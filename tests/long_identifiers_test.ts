/**
 * Identifiers the gateway does not choose (the identity provider's subject, a metadata
 * document's URL as client_id) can be longer than a Deno KV key may be (2 KiB in all). A person
 * or a client named that way still signs in, consents, keeps a credential and calls tools.
 */
import assert from "node:assert/strict";
import {
  csrfOf,
  openTokensPage,
  postForm,
  startCredentialGateway,
} from "./fixtures/credential_gateway.ts";
import { startGatewayProcess } from "./fixtures/gateway_process.ts";
import { startIdp } from "./fixtures/idp.ts";
import { connectWithOAuth, MemoryOAuthProvider, REDIRECT_URI } from "./fixtures/oauth_client.ts";
import { authorizeParams } from "./fixtures/oauth_raw.ts";
import { startRelay } from "./fixtures/ports.ts";
import { cimdGatewayYaml, startDocumentServer } from "./fixtures/cimd_documents.ts";
import { UserAgent } from "./fixtures/user_agent.ts";

Deno.test("a person whose identity provider subject is 4 KB long signs in, keeps a pasted token and calls a tool with it", async () => {
  const setup = await startCredentialGateway();
  try {
    const subject = `long-subject-${"s".repeat(4096)}`;
    setup.idp.loginAs = { email: "alice@example.com", name: "Alice", accountId: subject };
    const agent = new UserAgent();
    const page = await openTokensPage(agent, setup.url);
    const saved = await postForm(agent, setup.url, "/my/tokens/set", {
      csrf: csrfOf(page),
      service: "notion",
      token: "ntn_long_subject_0123456789",
      next: "tokens",
    });
    await saved.body?.cancel();
    assert.equal(saved.status, 303);
    assert.match(saved.headers.get("location")!, /notice=saved/);

    const { client } = await connectWithOAuth(agent, `${setup.url}/notion/mcp`);
    try {
      const result = await client.callTool({ name: "echo_environment", arguments: {} });
      const echoed = result.structuredContent as { headers: Record<string, string> };
      assert.equal(echoed.headers.authorization, "Bearer ntn_long_subject_0123456789");
    } finally {
      await client.close();
    }
    // A second client: its consent is stored under the long subject as well.
    const again = await connectWithOAuth(agent, `${setup.url}/plain/mcp`);
    await again.client.close();
    const logs = setup.gw.logs.join("\n");
    assert.ok(!logs.includes('"status":500'), "no request failed with 500");
    assert.ok(!logs.includes("unhandled error"), "no unhandled error");
  } finally {
    await setup.close();
  }
});

Deno.test("a client whose metadata document URL (its client_id) is 2 KB long is authorized and calls a tool", async () => {
  const documents = await startDocumentServer((_url, self) =>
    Response.json({
      client_id: self,
      client_name: "CIMD client with a long URL",
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    })
  );
  const relay = startRelay();
  const idp = await startIdp([`${relay.url}/oauth/callback`]);
  const gateway = await startGatewayProcess(cimdGatewayYaml(relay.url, idp), {
    DENO_CERT: documents.certFile,
  });

  relay.forwardTo(gateway.port);
  try {
    const origin = documents.origin;
    // The longest client_id Gatehouse admits (2048 characters).
    const clientId = `${origin}/clients/${
      "c".repeat(2048 - origin.length - "/clients/.json".length)
    }.json`;
    assert.equal(clientId.length, 2048);
    const provider = new MemoryOAuthProvider(clientId);
    const { client } = await connectWithOAuth(new UserAgent(), `${relay.url}/alpha/mcp`, provider);
    try {
      assert.equal(provider.clientInfo?.client_id, clientId, "no registration happened");
      const result = await client.callTool({ name: "echo", arguments: { via: "long cimd" } });
      assert.deepEqual(result.content, [{ type: "text", text: '{"via":"long cimd"}' }]);
    } finally {
      await client.close();
    }
    // A longer one (3 KB) is not a client_id Gatehouse admits: refused with 400, not 500.
    const tooLong = `${origin}/clients/${"c".repeat(3000)}.json`;
    const params = await authorizeParams(tooLong, {}, `${relay.url}/alpha`);
    const refused = await fetch(`${relay.url}/authorize?${params}`, { redirect: "manual" });
    await refused.body?.cancel();
    assert.equal(refused.status, 400);
    assert.ok(!gateway.logs().includes('"status":500'), "no request failed with 500");
    assert.ok(!gateway.logs().includes("unhandled error"), "no unhandled error");
  } finally {
    await gateway.close();
    await relay.close();
    await idp.close();
    await documents.close();
  }
});
