/**
 * Service credentials (`serviceAuths`) and a server's `access:`: a bearer token counts as a
 * member of its entry's `groups`; HTTP Basic accepts its one username and password (end to end
 * with the SDK client) and refuses anything else with 401 and a Basic challenge for that server
 * only, while other servers keep their Bearer challenge.
 */
import assert from "node:assert/strict";
import { startGateway } from "./fixtures/gateway.ts";
import { INIT, mcpHeaders, post } from "./fixtures/raw.ts";
import { Client, StreamableHTTPClientTransport } from "./fixtures/sdk.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const SERVER = `transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts"]`;
const CI_TOKEN = "ci-token-0123456789abcdef";
const OTHER_TOKEN = "other-token-0123456789abcdef";
// Not ASCII on purpose: the pair is compared as the UTF-8 bytes the client encoded.
const PASSWORD = "correct horse battery stäple";

const CONFIG = `
servers:
  builds:
    ${SERVER}
    access: { groups: [ci] }
    serviceAuths:
      - { type: bearer, tokens: ["\${CI_TOKEN}"], groups: [ci] }
      - { type: bearer, tokens: ["\${OTHER_TOKEN}"] }
  legacy:
    ${SERVER}
    access: { groups: [ci] }
    serviceAuths:
      - { type: basic, username: robot, password: "\${PASSWORD}", groups: [ci] }
  mixed:
    ${SERVER}
    serviceAuths:
      - { type: bearer, tokens: ["\${CI_TOKEN}"] }
      - { type: basic, username: robot, password: "\${PASSWORD}" }
`;
const ENV = { CI_TOKEN, OTHER_TOKEN, PASSWORD };

const basic = (user: string, password: string) =>
  `Basic ${btoa(String.fromCharCode(...new TextEncoder().encode(`${user}:${password}`)))}`;

async function initialize(url: string, authorization?: string) {
  const answer = await post(url, INIT, mcpHeaders(authorization ? { authorization } : {}));
  return {
    status: answer.status,
    challenge: answer.headers.get("www-authenticate"),
    error: answer.json as { error?: string; error_description?: string } | undefined,
  };
}

Deno.test("a service token counts as a member of its groups: the server's access admits it, and no other token", async () => {
  const gw = await startGateway(CONFIG, ENV);
  try {
    assert.equal((await initialize(`${gw.url}/builds/mcp`, `Bearer ${CI_TOKEN}`)).status, 200);
    assert.deepEqual(await initialize(`${gw.url}/builds/mcp`, `Bearer ${OTHER_TOKEN}`), {
      status: 403,
      challenge:
        `Bearer realm="gatehouse", error="insufficient_scope", error_description="a caller without an email address may not use the server 'builds': it needs one of the groups ci, and this credential has none of them (it has no groups); add one to the credential's groups: in serviceAuths"`,
      error: {
        error: "insufficient_scope",
        error_description:
          'a caller without an email address may not use the server "builds": it needs one of the groups ci, and this credential has none of them (it has no groups); add one to the credential\'s groups: in serviceAuths',
      },
    });
    // The configuration warned of the token that no rule admits.
    assert.ok(
      gw.config.warnings.some((warning) =>
        warning.path.join(".") === "servers.builds.serviceAuths.1" &&
        warning.message === "its callers pass no rule of this server's access, so they are refused"
      ),
      JSON.stringify(gw.config.warnings),
    );
  } finally {
    await gw.close();
  }
});

Deno.test("HTTP Basic: the right pair works end to end with the SDK client", async () => {
  const gw = await startGateway(CONFIG, ENV);
  const client = new Client({ name: "basic-test", version: "1.0.0" });
  try {
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gw.url}/legacy/mcp`), {
        requestInit: { headers: { authorization: basic("robot", PASSWORD) } },
      }),
    );
    const result = await client.callTool({ name: "echo", arguments: { hello: "basic" } });
    assert.equal(result.isError, undefined, JSON.stringify(result));
    assert.ok((await client.listTools()).tools.some((tool) => tool.name === "echo"));
  } finally {
    await client.close();
    await gw.close();
  }
});

Deno.test("HTTP Basic: anything but the right pair gets 401 with a Basic challenge for that server only", async () => {
  const gw = await startGateway(CONFIG, ENV);
  try {
    const legacy = `${gw.url}/legacy/mcp`;
    const refused = (description: string) => ({
      status: 401,
      challenge: 'Basic realm="gatehouse/legacy", charset="UTF-8"',
      error: { error: "unauthorized", error_description: description },
    });
    const wrong = refused('the username or password is wrong for the server "legacy"');
    for (
      const authorization of [
        basic("robot", `${PASSWORD}!`),
        basic("Robot", PASSWORD),
        basic("robot", ""),
        basic("", PASSWORD),
        `${basic("robot", PASSWORD)}%`,
        "Basic !!!not-base64!!!",
      ]
    ) {
      assert.deepEqual(await initialize(legacy, authorization), wrong, authorization);
    }
    const missing = refused(
      'the server "legacy" requires a username and password: send Authorization: Basic',
    );
    assert.deepEqual(await initialize(legacy), missing);
    assert.deepEqual(await initialize(legacy, `Bearer ${CI_TOKEN}`), {
      ...missing,
      error: {
        error: "invalid_token",
        error_description: 'the bearer token is not valid for the server "legacy"',
      },
    });

    // A server that takes bearer tokens and Basic: both challenges; either credential works.
    const mixed = await initialize(`${gw.url}/mixed/mcp`, basic("robot", "wrong-password-0123"));
    assert.equal(mixed.status, 401);
    assert.equal(
      mixed.challenge,
      'Bearer realm="gatehouse", Basic realm="gatehouse/mixed", charset="UTF-8"',
    );
    assert.equal((await initialize(`${gw.url}/mixed/mcp`, basic("robot", PASSWORD))).status, 200);
    assert.equal((await initialize(`${gw.url}/mixed/mcp`, `Bearer ${CI_TOKEN}`)).status, 200);

    // A server without Basic keeps its Bearer challenge, and takes no Basic pair.
    assert.deepEqual(await initialize(`${gw.url}/builds/mcp`, basic("robot", PASSWORD)), {
      status: 401,
      challenge: 'Bearer realm="gatehouse"',
      error: {
        error: "unauthorized",
        error_description:
          'the server "builds" requires a bearer token: send Authorization: Bearer <token>',
      },
    });
  } finally {
    await gw.close();
  }
});
