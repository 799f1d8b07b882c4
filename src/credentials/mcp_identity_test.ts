import assert from "node:assert/strict";
import type * as oauth from "oauth4webapi";
import { testClock } from "../../tests/fixtures/clock.ts";
import type { McpUserToken } from "../config/types.ts";
import { Secret } from "../core/secret.ts";
import { deriveAesKey } from "../crypto/keys.ts";
import { createLogger } from "../observability/logger.ts";
import { openKvStore } from "../store/kv.ts";
import { UpstreamIdentities } from "./mcp_identity.ts";
import { ServiceOAuthError } from "./service_oauth.ts";

const CONFIG: McpUserToken = {
  kind: "mcp",
  displayName: "Tracker",
  scopes: [],
  authorizationHosts: [],
};
const CALLBACK = "https://gw.example.com/oauth/callback/tracker";
const SECRET = "registered-secret-0123456789abcdef";

/** A registration endpoint on 127.0.0.1 answering each POST with `answer(count)`. */
async function registrar(answer: (count: number) => Response) {
  const bodies: unknown[] = [];
  const ready = Promise.withResolvers<number>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: ({ port }) => ready.resolve(port) },
    async (request) => {
      bodies.push(await request.json());
      return answer(bodies.length);
    },
  );
  const url = `http://127.0.0.1:${await ready.promise}`;
  const server_: oauth.AuthorizationServer = {
    issuer: url,
    authorization_endpoint: `${url}/authorize`,
    token_endpoint: `${url}/token`,
    registration_endpoint: `${url}/register`,
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["client_secret_basic"],
  };
  return { server: server_, bodies, close: () => server.shutdown() };
}

async function identities(
  secret = "vault-secret-0123456789-abcdefghijklmnop",
  store?: Awaited<ReturnType<typeof openKvStore>>,
) {
  const kv = store ?? await openKvStore(":memory:");
  const key = await deriveAesKey(new Secret(secret), "vault-encryption");
  const clock = testClock();
  return {
    kv,
    clock,
    ids: new UpstreamIdentities({
      store: kv,
      keys: [key],
      clock,
      logger: createLogger("error", () => {}),
      metadataDocumentUrl: "https://gw.example.com/oauth/upstream-client",
      clientName: "Gatehouse",
    }),
  };
}

Deno.test("clientFor() takes the configured client, else the metadata document when advertised, else registers", async () => {
  const { kv, ids } = await identities();
  const as = await registrar(() => Response.json({ client_id: "dyn-1" }, { status: 201 }));
  try {
    const configured = await ids.clientFor(
      { ...CONFIG, clientId: "by-hand", clientSecret: new Secret("s3cret") },
      { ...as.server, client_id_metadata_document_supported: true },
      CALLBACK,
      fetch,
    );
    assert.deepEqual(configured, {
      clientId: "by-hand",
      clientSecret: "s3cret",
      authMethod: "client_secret_basic",
      source: "configured",
    });
    const document = await ids.clientFor(
      CONFIG,
      { ...as.server, client_id_metadata_document_supported: true },
      CALLBACK,
      fetch,
    );
    assert.deepEqual(document, {
      clientId: "https://gw.example.com/oauth/upstream-client",
      authMethod: "none",
      source: "metadata_document",
    });
    assert.equal(as.bodies.length, 0);
    const registered = await ids.clientFor(CONFIG, as.server, CALLBACK, fetch);
    assert.equal(registered.clientId, "dyn-1");
    assert.equal(registered.source, "registered");
    assert.deepEqual(as.bodies, [{
      client_name: "Gatehouse",
      redirect_uris: [CALLBACK],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
    }]);
    await assert.rejects(
      ids.clientFor(CONFIG, { ...as.server, registration_endpoint: undefined }, CALLBACK, fetch),
      (error) =>
        error instanceof ServiceOAuthError &&
        /accepts neither Gatehouse's client ID metadata document nor dynamic registration: register a client there by hand and set userToken.clientId/
          .test(error.message),
    );
  } finally {
    await as.close();
    kv.close();
  }
});

Deno.test("clientFor() registers once, keeps the secret sealed, and registers again when it cannot read it or it expired", async () => {
  const { kv, clock, ids } = await identities();
  const as = await registrar((count) =>
    Response.json({
      client_id: `dyn-${count}`,
      client_secret: SECRET,
      client_secret_expires_at: count === 2 ? Math.floor(clock.now() / 1000) + 60 : 0,
    }, { status: 201 })
  );
  try {
    const first = await ids.clientFor(CONFIG, as.server, CALLBACK, fetch);
    assert.deepEqual(first, {
      clientId: "dyn-1",
      clientSecret: SECRET,
      authMethod: "client_secret_basic",
      source: "registered",
    });
    assert.equal((await ids.clientFor(CONFIG, as.server, CALLBACK, fetch)).clientId, "dyn-1");
    assert.equal(as.bodies.length, 1);
    // At rest: nothing of the secret or the client in the clear.
    const records = await kv.list(["credentials", "upstream-client"]);
    assert.equal(records.length, 1);
    const raw = JSON.stringify(records[0].value);
    assert.ok(!raw.includes(SECRET) && !raw.includes("dyn-1"), raw);

    // Another master secret (no previousSecrets) cannot open it: a new registration.
    const other = await identities("another-secret-0123456789-abcdefghijklmn", kv);
    assert.equal((await other.ids.clientFor(CONFIG, as.server, CALLBACK, fetch)).clientId, "dyn-2");
    assert.equal((await other.ids.clientFor(CONFIG, as.server, CALLBACK, fetch)).clientId, "dyn-2");
    assert.equal(as.bodies.length, 2);
    // dyn-2's secret expires in 60 s: past that, registered again.
    other.clock.advance(61_000);
    assert.equal((await other.ids.clientFor(CONFIG, as.server, CALLBACK, fetch)).clientId, "dyn-3");
  } finally {
    await as.close();
    kv.close();
  }
});

Deno.test("clientFor() says why a registration was refused", async () => {
  const { kv, ids } = await identities();
  const as = await registrar(() =>
    Response.json({
      error: "invalid_client_metadata",
      error_description: "redirect_uris must be https",
    }, { status: 400 })
  );
  try {
    await assert.rejects(
      ids.clientFor(CONFIG, as.server, CALLBACK, fetch),
      (error) =>
        error instanceof ServiceOAuthError && error.code === "refused" &&
        error.message ===
          `registration at ${as.server.issuer} was refused (invalid_client_metadata: redirect_uris must be https)`,
    );
  } finally {
    await as.close();
    kv.close();
  }
});
