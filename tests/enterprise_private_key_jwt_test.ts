/**
 * A client named by its metadata document (CIMD) authenticates with private_key_jwt: its keys
 * are in the document (`jwks`) or at its `jwks_uri`, fetched through the same SSRF guard as the
 * document, and it presents an ID-JAG. The gateway runs as its own process so it can trust the
 * test's certificate authority (DENO_CERT), as in oauth_cimd_test.ts.
 */
import assert from "node:assert/strict";
import * as jose from "jose";
import { startGatewayProcess } from "./fixtures/gateway_process.ts";
import { startIdp } from "./fixtures/idp.ts";
import { IdJagKeys } from "./fixtures/idp_id_jag.ts";
import { startRelay } from "./fixtures/ports.ts";
import { cimdGatewayYaml, startDocumentServer } from "./fixtures/cimd_documents.ts";

const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const CLIENT_ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

Deno.test("ID-JAG with private_key_jwt: a CIMD client's keys inline or at its jwks_uri authenticate it; a replayed or foreign client assertion is refused", async () => {
  const inline = await jose.generateKeyPair("ES256", { extractable: true });
  const remote = await jose.generateKeyPair("ES256", { extractable: true });
  const stranger = await jose.generateKeyPair("ES256", { extractable: true });
  const publicJwk = async (key: jose.CryptoKey, kid: string) => ({
    ...(await jose.exportJWK(key)),
    kid,
    alg: "ES256",
    use: "sig",
  });
  const inlineJwk = await publicJwk(inline.publicKey, "inline-1");
  const remoteJwk = await publicJwk(remote.publicKey, "remote-1");
  const documents = await startDocumentServer((url, self) => {
    const document = {
      client_id: self,
      client_name: "Agent",
      grant_types: [JWT_BEARER],
      token_endpoint_auth_method: "private_key_jwt",
    };
    if (url.pathname === "/agent.json") {
      return Response.json({ ...document, jwks: { keys: [inlineJwk] } });
    }
    if (url.pathname === "/agent-remote.json") {
      return Response.json({ ...document, jwks_uri: `https://localhost:${url.port}/keys.json` });
    }
    if (url.pathname === "/keys.json") return Response.json({ keys: [remoteJwk] });
    return new Response("not found", { status: 404 });
  });
  const docs = documents.origin;
  const keys = await IdJagKeys.create();
  const idp = await startIdp([], {
    idJag: { keys, policy: { clients: {}, lifetime: 300, issued: 0 } },
  });
  const relay = startRelay();
  const gateway = await startGatewayProcess(cimdGatewayYaml(relay.url, idp, "  idJag: true"), {
    DENO_CERT: documents.certFile,
  });

  relay.forwardTo(gateway.port);
  const url = relay.url;
  const now = () => Math.floor(Date.now() / 1000);
  const idJag = (clientId: string) =>
    keys.sign({
      iss: idp.issuer,
      sub: "alice-example-com",
      aud: url,
      client_id: clientId,
      jti: crypto.randomUUID(),
      iat: now(),
      exp: now() + 300,
      resource: `${url}/alpha`,
      email: "alice@example.com",
    });
  const clientAssertion = (
    clientId: string,
    key: jose.CryptoKey,
    kid: string,
    aud: string | string[] = url,
  ) =>
    new jose.SignJWT({
      iss: clientId,
      sub: clientId,
      aud,
      jti: crypto.randomUUID(),
      iat: now(),
      exp: now() + 60,
    }).setProtectedHeader({ alg: "ES256", kid }).sign(key);
  const present = async (clientId: string, assertion: string) => {
    const response = await fetch(`${url}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: JWT_BEARER,
        assertion: await idJag(clientId),
        client_assertion_type: CLIENT_ASSERTION,
        client_assertion: assertion,
      }),
    });
    return { status: response.status, body: await response.json() };
  };
  try {
    const metadata = await (await fetch(`${url}/.well-known/oauth-authorization-server`)).json();
    assert.ok(metadata.token_endpoint_auth_methods_supported.includes("private_key_jwt"));

    const agent = `${docs}/agent.json`;
    const once = await clientAssertion(agent, inline.privateKey, "inline-1");
    const issued = await present(agent, once);
    assert.equal(issued.status, 200, JSON.stringify(issued.body));
    assert.equal(issued.body.refresh_token, undefined);
    const call = await fetch(`${url}/alpha/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${issued.body.access_token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "agent", version: "1" },
        },
      }),
    });
    assert.equal(call.status, 200);
    await call.body?.cancel();

    assert.deepEqual(await present(agent, once), {
      status: 401,
      body: {
        error: "invalid_client",
        error_description: "the client assertion was already used (its jti was seen before)",
      },
    });
    assert.deepEqual(
      await present(agent, await clientAssertion(agent, stranger.privateKey, "inline-1")),
      {
        status: 401,
        body: {
          error: "invalid_client",
          error_description:
            "the client assertion signature does not verify with the client's published keys",
        },
      },
    );

    // The audience is the issuer alone (draft-ietf-oauth-rfc7523bis): an assertion the client
    // made for another authorization server whose metadata named Gatehouse's token endpoint, or
    // one naming several audiences, could be replayed here by that server.
    for (const aud of [`${url}/token`, [url, "https://other-as.example"]]) {
      assert.deepEqual(
        await present(agent, await clientAssertion(agent, inline.privateKey, "inline-1", aud)),
        {
          status: 401,
          body: {
            error: "invalid_client",
            error_description:
              "the client assertion must name this authorization server's issuer, and it alone, as aud",
          },
        },
        JSON.stringify(aud),
      );
    }

    const remoteAgent = `${docs}/agent-remote.json`;
    const viaUri = await present(
      remoteAgent,
      await clientAssertion(remoteAgent, remote.privateKey, "remote-1"),
    );
    assert.equal(viaUri.status, 200, JSON.stringify(viaUri.body));
    assert.equal(documents.fetched.filter((path) => path === "/keys.json").length, 1);
    assert.ok(!gateway.logs().includes(once.split(".")[2]), "no client assertion in the logs");
  } finally {
    await gateway.close();
    await relay.close();
    await idp.close();
    await documents.close();
  }
});
