/**
 * Who may use which server (`servers.NAME.access`), with a real OpenID Connect provider behind
 * the gateway: /authorize issues no code for a server the person may not use (the client gets
 * access_denied, the person a page saying why), and once a reload withdraws a server, the
 * person's refresh fails and their still-valid access token gets 403 on every MCP endpoint.
 */
import assert from "node:assert/strict";
import { REDIRECT_URI } from "./fixtures/oauth_client.ts";
import type { TestGateway } from "./fixtures/gateway.ts";
import type { TestIdp } from "./fixtures/idp.ts";
import { groupsIdpSection, startGroupsIdpGateway } from "./fixtures/groups_idp_gateway.ts";
import { TEST_MASTER_SECRET } from "./fixtures/oauth_gateway.ts";
import {
  authorizeParams,
  exchangeCode,
  jwtClaims,
  obtainCode,
  registerClient,
  token,
} from "./fixtures/oauth_raw.ts";
import { INIT, mcpHeaders, post } from "./fixtures/raw.ts";
import { UserAgent } from "./fixtures/user_agent.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const SERVER = `transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts"]`;

/** alpha's `access:` is the test's to choose (and to change by a reload); beta is the boss's. */
function config(idp: TestIdp, alphaAccess: string): string {
  return `
baseUrl: http://127.0.0.1:{{PORT}}
secret: ${TEST_MASTER_SECRET}
servers:
  alpha:
    ${SERVER}
    access: ${alphaAccess}
  beta:
    ${SERVER}
    access: { emails: [boss@example.com] }
  open:
    ${SERVER}
oauth:
  accessTokenTtl: 5m
${
    groupsIdpSection(idp, [
      "domains: [example.com]",
      "emails: [contractor@partner.org]",
      "groups: [editors]",
    ])
  }
`;
}

interface Setup {
  gw: TestGateway;
  idp: TestIdp;
  url: string;
  reload(alphaAccess: string): Promise<void>;
  close(): Promise<void>;
}

async function start(alphaAccess: string): Promise<Setup> {
  const { gw, idp, env, close } = await startGroupsIdpGateway((idp) => config(idp, alphaAccess));
  return {
    gw,
    idp,
    url: gw.url,
    reload: (access) => gw.reload(config(idp, access), env),
    close,
  };
}

const isCallback = (url: URL) => url.href.startsWith(REDIRECT_URI);

/** Runs /authorize for `resources` as a fresh browser; where it stopped, and what it showed. */
async function authorize(setup: Setup, clientId: string, resources: string[]) {
  const agent = new UserAgent();
  const params = await authorizeParams(clientId, { resource: resources });
  const stop = await agent.follow(`${setup.url}/authorize?${params}`, isCallback);
  if (!isCallback(stop.url) && stop.body.includes('name="decision"')) {
    return await agent.submitForm(stop.url, stop.body, { decision: "allow" }, isCallback);
  }
  return stop;
}

/** The refusal page: what it says, and where its button takes the person. */
function refusalPage(body: string) {
  return {
    title: /<h1>([^<]*)<\/h1>/.exec(body)?.[1],
    text: [...body.matchAll(/<p>((?:[^<]|<\/?bdi>)*)<\/p>/g)]
      .map((match) => match[1].replace(/<\/?bdi>/g, "")).join(" "),
    back: new URL(
      /<a class="button primary" href="([^"]*)"/.exec(body)![1].replaceAll("&amp;", "&"),
    ),
  };
}

Deno.test("/authorize for a server the person may not use issues no code: the client gets access_denied, the person a page saying why", async () => {
  const setup = await start("{ domains: [example.com] }");
  try {
    const client = await registerClient(setup.url);
    // A server the person may use: a code, as before.
    setup.idp.loginAs = { email: "bob@example.com" };
    const allowed = await authorize(setup, client.client_id, [`${setup.url}/alpha`]);
    assert.ok(isCallback(allowed.url) && allowed.url.searchParams.get("code"), allowed.body);

    // Listed by email only: someone else of the domain is refused.
    const refused = await authorize(setup, client.client_id, [`${setup.url}/beta`]);
    assert.equal(refused.response.status, 403);
    assert.ok(!isCallback(refused.url), "no redirect to the client before the person reads why");
    const page = refusalPage(refused.body);
    assert.equal(page.title, "You may not use “beta”");
    assert.match(page.text, /bob@example\.com may not use the server “beta” on this gateway/);
    assert.match(page.text, /ask the gateway's administrators for access to “beta”/);
    assert.equal(page.back.origin + page.back.pathname, REDIRECT_URI);
    assert.equal(page.back.searchParams.get("error"), "access_denied");
    assert.equal(page.back.searchParams.get("state"), "xyz-state");
    assert.equal(page.back.searchParams.get("iss"), setup.url);
    assert.equal(page.back.searchParams.get("code"), null);
    assert.match(
      page.back.searchParams.get("error_description")!,
      /bob@example\.com may not use the server "beta"/,
    );

    // Several servers at once: one refusal refuses them all, and the page says so.
    const both = await authorize(setup, client.client_id, [
      `${setup.url}/alpha`,
      `${setup.url}/beta`,
    ]);
    assert.equal(both.response.status, 403);
    assert.match(refusalPage(both.body).text, /It asked for alpha, beta; since you may not use/);

    // Admitted to the gateway by address, outside alpha's domain: refused there, not on open.
    setup.idp.loginAs = { email: "contractor@partner.org" };
    const outsider = await authorize(setup, client.client_id, [`${setup.url}/alpha`]);
    assert.equal(outsider.response.status, 403);
    assert.equal(refusalPage(outsider.body).title, "You may not use “alpha”");
    const open = await authorize(setup, client.client_id, [`${setup.url}/open`]);
    assert.ok(isCallback(open.url) && open.url.searchParams.get("code"), open.body);
  } finally {
    await setup.close();
  }
});

Deno.test("a group the identity provider names admits at /authorize, and only that group", async () => {
  const setup = await start("{ groups: [editors] }");
  try {
    const client = await registerClient(setup.url);
    setup.idp.loginAs = { email: "carol@example.com", claims: { groups: ["staff", "editors"] } };
    const editor = await authorize(setup, client.client_id, [`${setup.url}/alpha`]);
    assert.ok(isCallback(editor.url) && editor.url.searchParams.get("code"), editor.body);
    setup.idp.loginAs = { email: "dan@example.com", claims: { groups: ["staff"] } };
    const other = await authorize(setup, client.client_id, [`${setup.url}/alpha`]);
    assert.equal(other.response.status, 403);
    assert.equal(refusalPage(other.body).title, "You may not use “alpha”");
  } finally {
    await setup.close();
  }
});

/** An MCP request of each front transport, with `token`, and what it was answered. */
async function everyFront(url: string, token: string) {
  const auth = { authorization: `Bearer ${token}` };
  const requests: [string, string, RequestInit][] = [
    ["POST /mcp", `${url}/alpha/mcp`, {
      method: "POST",
      headers: mcpHeaders(auth),
      body: JSON.stringify(INIT),
    }],
    ["GET /mcp", `${url}/alpha/mcp`, {
      headers: { ...auth, accept: "text/event-stream", "mcp-session-id": "0".repeat(32) },
    }],
    ["DELETE /mcp", `${url}/alpha/mcp`, {
      method: "DELETE",
      headers: { ...auth, "mcp-session-id": "0".repeat(32) },
    }],
    ["GET /sse", `${url}/alpha/sse`, { headers: { ...auth, accept: "text/event-stream" } }],
    ["POST /message", `${url}/alpha/message?sessionId=${"0".repeat(32)}`, {
      method: "POST",
      headers: mcpHeaders(auth),
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    }],
  ];
  const answers = [];
  for (const [what, target, init] of requests) {
    const response = await fetch(target, init);
    const type = response.headers.get("content-type") ?? "";
    // A stream that was let through is not read: only its status matters here.
    const body = type.includes("json") ? await response.json() : undefined;
    if (!type.includes("json")) await response.body?.cancel();
    answers.push({
      what,
      status: response.status,
      challenge: response.headers.get("www-authenticate"),
      body,
    });
  }
  return answers;
}

Deno.test("after a reload withdraws a server, the person's refresh fails and their live token gets 403 on every front", async () => {
  const setup = await start("{ domains: [example.com] }");
  try {
    setup.idp.loginAs = { email: "bob@example.com" };
    const client = await registerClient(setup.url);
    const code = (await obtainCode(
      new UserAgent(),
      setup.url,
      client.client_id,
      `${setup.url}/alpha`,
    )).get("code")!;
    const tokens = (await exchangeCode(setup.url, client.client_id, code)).json;
    const before = await post(
      `${setup.url}/alpha/mcp`,
      INIT,
      mcpHeaders({ authorization: `Bearer ${tokens.access_token}` }),
    );
    assert.equal(before.status, 200, before.text);

    await setup.reload("{ emails: [boss@example.com] }");

    const reason =
      'bob@example.com may not use the server "alpha"; ask the gateway\'s administrators for access';
    for (const answer of await everyFront(setup.url, tokens.access_token)) {
      assert.deepEqual(answer, {
        what: answer.what,
        status: 403,
        challenge: `Bearer realm="gatehouse", error="insufficient_scope", error_description="${
          reason.replaceAll('"', "'")
        }"`,
        body: { error: "insufficient_scope", error_description: reason },
      });
    }
    const refresh = await token(setup.url, {
      grant_type: "refresh_token",
      client_id: client.client_id,
      refresh_token: tokens.refresh_token,
    });
    assert.equal(refresh.status, 400);
    assert.deepEqual(refresh.json, {
      error: "invalid_grant",
      error_description: `access was withdrawn: ${reason}`,
    });
  } finally {
    await setup.close();
  }
});

Deno.test("after a reload that names a new group, the first request admits exactly its members, whatever their tokens carry", async () => {
  const setup = await start("{ groups: [staff] }");
  try {
    const client = await registerClient(setup.url);
    const signIn = async (email: string, groups: string[]) => {
      setup.idp.loginAs = { email, claims: { groups } };
      const code =
        (await obtainCode(new UserAgent(), setup.url, client.client_id, `${setup.url}/alpha`))
          .get("code")!;
      return (await exchangeCode(setup.url, client.client_id, code)).json.access_token as string;
    };
    // "desk" is named nowhere yet, so no token carries it.
    const alice = await signIn("alice@example.com", ["staff", "desk"]);
    const bob = await signIn("bob@example.com", ["staff"]);
    assert.deepEqual(jwtClaims(alice).groups, ["staff"]);
    const initialize = async (token: string) => {
      const answer = await post(
        `${setup.url}/alpha/mcp`,
        INIT,
        mcpHeaders({ authorization: `Bearer ${token}` }),
      );
      return answer.status;
    };
    const stateless = async (token: string) => {
      const answer = await post(
        `${setup.url}/alpha/mcp`,
        {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/list",
          params: {
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientCapabilities": {},
            },
          },
        },
        mcpHeaders({
          authorization: `Bearer ${token}`,
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "tools/list",
        }),
      );
      return answer.status;
    };
    assert.equal(await initialize(alice), 200);
    assert.equal(await initialize(bob), 200);

    await setup.reload("{ groups: [desk] }");
    assert.equal(await initialize(alice), 200, "alice is in desk: her grant says so");
    assert.equal(await stateless(alice), 200);
    assert.equal(await initialize(bob), 403, "bob is not in desk");
    assert.equal(await stateless(bob), 403);

    // And back: the same tokens, judged again by the policy now in force.
    await setup.reload("{ groups: [staff] }");
    assert.equal(await initialize(bob), 200);
  } finally {
    await setup.close();
  }
});

Deno.test("an address the provider calls unverified is left out of the token and passes no emails rule", async () => {
  const setup = await start("{ groups: [editors] }");
  try {
    // Admitted by a group, with an address the person could have typed in themselves.
    setup.idp.loginAs = {
      email: "boss@example.com",
      emailVerified: false,
      claims: { groups: ["editors"] },
    };
    const client = await registerClient(setup.url);
    const code = (await obtainCode(
      new UserAgent(),
      setup.url,
      client.client_id,
      `${setup.url}/alpha`,
    )).get("code")!;
    const tokens = (await exchangeCode(setup.url, client.client_id, code)).json;
    const claims = jwtClaims(tokens.access_token);
    assert.equal(claims.email, undefined);
    assert.deepEqual(claims.groups, ["editors"]);

    // alpha is now for the boss's address alone: the unverified claim to it does not pass.
    await setup.reload("{ emails: [boss@example.com] }");
    const refused = await post(
      `${setup.url}/alpha/mcp`,
      INIT,
      mcpHeaders({ authorization: `Bearer ${tokens.access_token}` }),
    );
    assert.equal(refused.status, 403, refused.text);
  } finally {
    await setup.close();
  }
});
