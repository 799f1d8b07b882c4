/**
 * Who is calling, told to backends (docs/identity.md), with real parts: oidc-provider as the
 * company IdP, two people signed in through it, a backend that reports what each request told
 * it, and `jose` verifying the assertions against the gateway's JWKS as a backend would.
 */
import assert from "node:assert/strict";
import http from "node:http";
import * as jose from "jose";
import type { TestGateway } from "./fixtures/gateway.ts";
import type { TestIdp } from "./fixtures/idp.ts";
import {
  type GroupsIdpGateway,
  groupsIdpSection,
  startGroupsIdpGateway,
} from "./fixtures/groups_idp_gateway.ts";
import {
  type IdentityBackend,
  startIdentityBackend,
  startIdentitySseBackend,
} from "./fixtures/identity_backend.ts";
import { exchangeCode, obtainCode, registerClient } from "./fixtures/oauth_raw.ts";
import { callTool2026, listTools2026 } from "./fixtures/raw.ts";
import { UserAgent } from "./fixtures/user_agent.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";
import { connectClient } from "./fixtures/client.ts";

const ROOT = new URL("../", import.meta.url).pathname;

const NAMES = [
  "x-gatehouse-user",
  "x-gatehouse-email",
  "x-gatehouse-groups",
  "x-gatehouse-client",
  "x-gatehouse-assertion",
];

interface Setup {
  gw: TestGateway;
  idp: TestIdp;
  backend: IdentityBackend;
  sse: IdentityBackend;
}

async function withGateway(test: (s: Setup) => Promise<void>) {
  const backend = await startIdentityBackend();
  const sse = await startIdentitySseBackend();
  // A Node backend as Node serves by default: 16 kB of request headers at most, else 431.
  const node = http.createServer((_req, res) => res.writeHead(404).end());
  await new Promise<void>((resolve) => node.listen(0, "127.0.0.1", resolve));
  const nodeUrl = `http://127.0.0.1:${(node.address() as { port: number }).port}/mcp`;
  // A backend that sends every request on to another origin (the identity backend's).
  const hop = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response(null, { status: 307, headers: { location: backend.url } }),
  );
  let started: GroupsIdpGateway | undefined;
  try {
    started = await startGroupsIdpGateway((idp) => `
baseUrl: http://127.0.0.1:{{PORT}}
servers:
  crm:
    transport: streamable-http
    url: ${backend.url}
    identity: { headers: true, assertion: true }
  hop:
    transport: streamable-http
    url: http://127.0.0.1:${hop.addr.port}/mcp
    identity: { headers: true, assertion: true }
  hop26:
    transport: streamable-http
    url: http://127.0.0.1:${hop.addr.port}/mcp
    protocol: "2026-07-28"
    identity: { headers: true, assertion: true }
  nodeapp:
    transport: streamable-http
    url: ${nodeUrl}
    protocol: "2025-11-25"
    identity: { headers: true, assertion: true }
  nodeeng:
    transport: streamable-http
    url: ${nodeUrl}
    protocol: "2025-11-25"
    identity: { headers: true, assertion: true, groups: ["eng-*"] }
  crmeng:
    transport: streamable-http
    url: ${backend.url}
    identity: { headers: true, assertion: true, groups: ["eng-*", "R&D, ?aris"] }
  desk:
    transport: streamable-http
    url: ${backend.url}
    identity: { assertion: true }
  plain:
    transport: streamable-http
    url: ${backend.url}
    headers: { X-Gatehouse-Mail: "{{user.email}}", X-Gatehouse-Who: "{{user.id}}" }
  legacy:
    transport: sse
    url: ${sse.url}
    identity: { headers: true, assertion: true }
  combo:
    transport: aggregate
    servers: [crm, desk]
  local:
    transport: stdio
    command: deno
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts"]
    env: { ${DENO_DIR_YAML}, WHO: "{{user.id}}", TEAMS: "{{user.groups}}" }
  mine:
    transport: stdio
    command: deno
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts"]
    env: { ${DENO_DIR_YAML}, WHO: "{{user.id}}", TEAMS: "{{user.groups}}", MAIL: "{{user.email}}" }
    share: person
  teams:
    transport: stdio
    command: deno
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts", "0", "tool=team_{{user.groups}}"]
    env: { ${DENO_DIR_YAML} }
    share: person
  teams-all:
    transport: aggregate
    servers: [teams]
    cacheTtl: 10m
oauth:
${groupsIdpSection(idp)}
`);
    await test({ gw: started.gw, idp: started.idp, backend, sse });
  } finally {
    await started?.close();
    await backend.close();
    await sse.close();
    await hop.shutdown();
    node.closeAllConnections();
    await new Promise((resolve) => node.close(resolve));
  }
}

interface Person {
  token: string;
  clientId: string;
}

async function signIn(
  s: Setup,
  email: string,
  groups?: string[],
  accountId?: string,
): Promise<Person> {
  s.idp.loginAs = { email, accountId, ...(groups && { claims: { groups } }) };
  const client = await registerClient(s.gw.url);
  const resources = [
    "crm",
    "hop",
    "hop26",
    "nodeapp",
    "nodeeng",
    "crmeng",
    "desk",
    "plain",
    "combo",
    "local",
    "mine",
    "teams",
    "teams-all",
    "legacy",
  ].map((name) => `${s.gw.url}/${name}`);
  const code = (await obtainCode(new UserAgent(), s.gw.url, client.client_id, "", {
    resource: resources,
  })).get("code")!;
  const tokens = await exchangeCode(s.gw.url, client.client_id, code);
  assert.equal(tokens.status, 200, JSON.stringify(tokens.json));
  return { token: tokens.json.access_token, clientId: client.client_id };
}

/** A 2026-07-28 request (no session): `whoami` on `server`, with extra client headers. */
async function call2026(
  s: Setup,
  person: Person,
  server: string,
  tool = "whoami",
  headers: Record<string, string> = {},
): Promise<Record<string, string>> {
  const response = await callTool2026(`${s.gw.url}/${server}/mcp`, person.token, tool, headers);
  const body = await response.json();
  assert.ok(body.result, JSON.stringify(body));
  return JSON.parse(body.result.content[0].text);
}

/**
 * A 2025-11-25 session on `server` opened with `person`'s token (initialize, initialized);
 * `post` sends a message in it, with another person's token where given.
 */
async function open2025(
  s: Setup,
  person: Person,
  server: string,
  headers: Record<string, string> = {},
) {
  const send = async (message: unknown, as: Person, session?: string) =>
    await fetch(`${s.gw.url}/${server}/mcp`, {
      method: "POST",
      headers: {
        ...headers,
        authorization: `Bearer ${as.token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(session && { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" }),
      },
      body: JSON.stringify(message),
    });
  const init = await send({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "t", version: "1" },
    },
  }, person);
  const session = init.headers.get("mcp-session-id")!;
  await init.body?.cancel();
  assert.ok(session, `initialize answered ${init.status}`);
  await (await send({ jsonrpc: "2.0", method: "notifications/initialized" }, person, session))
    .body?.cancel();
  return {
    session,
    post: (message: unknown, as = person) => send(message, as, session),
  };
}

/** A 2025-11-25 session: initialize, then `whoami`; the session is ended after. */
async function call2025(
  s: Setup,
  person: Person,
  server: string,
  tool = "whoami",
  headers: Record<string, string> = {},
): Promise<Record<string, string>> {
  const { session, post } = await open2025(s, person, server, headers);
  const called = await post({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: tool, arguments: {} },
  });
  const text = await called.text();
  const json = JSON.parse(text.startsWith("{") ? text : /^data: (.*)$/m.exec(text)![1]);
  assert.ok(json.result, text);
  await (await fetch(`${s.gw.url}/${server}/mcp`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${person.token}`, "mcp-session-id": session },
  })).body?.cancel();
  return JSON.parse(json.result.content[0].text);
}

function jwks(s: Setup) {
  return jose.createRemoteJWKSet(new URL(`${s.gw.url}/.well-known/gatehouse/jwks.json`));
}

Deno.test("each person's own identity reaches the backend, in both revisions, when two call at once", async () => {
  await withGateway(async (s) => {
    const alice = await signIn(s, "alice@example.com", ["eng", "R&D, Paris", "Équipe"]);
    const bob = await signIn(s, "bob@example.com");
    for (const call of [call2026, call2025]) {
      const [a, b] = await Promise.all([call(s, alice, "crm"), call(s, bob, "crm")]);
      assert.equal(a["x-gatehouse-user"], "oidc:alice-example-com");
      assert.equal(a["x-gatehouse-email"], "alice@example.com");
      assert.equal(a["x-gatehouse-groups"], "eng,R&D%2C%20Paris,%C3%89quipe");
      assert.deepEqual(
        a["x-gatehouse-groups"].split(",").map(decodeURIComponent),
        ["eng", "R&D, Paris", "Équipe"],
      );
      assert.equal(a["x-gatehouse-client"], alice.clientId);
      assert.equal(b["x-gatehouse-user"], "oidc:bob-example-com");
      assert.equal(b["x-gatehouse-email"], "bob@example.com");
      assert.equal(b["x-gatehouse-groups"], "", "a person without groups: an empty header");
      assert.equal(b["x-gatehouse-client"], bob.clientId);
      const [ja, jb] = [a, b].map((told) => jose.decodeJwt(told["x-gatehouse-assertion"]));
      assert.equal(ja.sub, "oidc:alice-example-com");
      assert.equal(jb.sub, "oidc:bob-example-com");
    }
    // Every request the backend saw of crm carried someone's identity (GET streams too).
    const crm = s.backend.seen.filter((seen) => seen.headers["x-gatehouse-user"] !== undefined);
    assert.ok(crm.some((seen) => seen.method === "initialize"));
    assert.ok(crm.some((seen) => seen.method === "notifications/initialized"));
    assert.ok(crm.some((seen) => seen.method === "GET"), "the GET stream is told who calls");
  });
});

Deno.test("the assertion verifies with jose against the JWKS for its own server only, and is reused per person and server", async () => {
  await withGateway(async (s) => {
    const alice = await signIn(s, "alice@example.com", ["eng"]);
    const bob = await signIn(s, "bob@example.com");
    const told = await call2026(s, alice, "crm");
    const assertion = told["x-gatehouse-assertion"];
    const { payload, protectedHeader } = await jose.jwtVerify(assertion, jwks(s), {
      issuer: s.gw.url,
      audience: `${s.gw.url}/crm`,
      algorithms: ["ES256"],
      typ: "JWT",
    });
    assert.ok(protectedHeader.kid);
    assert.equal(payload.sub, "oidc:alice-example-com");
    assert.equal(payload.email, "alice@example.com");
    assert.deepEqual(payload.groups, ["eng"]);
    assert.equal(payload.client_id, alice.clientId);
    assert.equal(payload.exp! - payload.iat!, 300);
    assert.ok(typeof payload.jti === "string" && payload.jti.length >= 16);
    await assert.rejects(
      jose.jwtVerify(assertion, jwks(s), { issuer: s.gw.url, audience: `${s.gw.url}/desk` }),
      (error: Error & { code?: string }) => error.code === "ERR_JWT_CLAIM_VALIDATION_FAILED",
    );
    // Without identity.headers, only the assertion; its aud is desk's.
    const desk = await call2026(s, alice, "desk");
    assert.deepEqual(Object.keys(desk), ["x-gatehouse-assertion"]);
    await jose.jwtVerify(desk["x-gatehouse-assertion"], jwks(s), {
      audience: `${s.gw.url}/desk`,
    });
    // An aggregate's members each get their own audience.
    const viaCombo = await call2026(s, alice, "combo", "crm.whoami");
    assert.equal(jose.decodeJwt(viaCombo["x-gatehouse-assertion"]).aud, `${s.gw.url}/crm`);
    const deskViaCombo = await call2026(s, alice, "combo", "desk.whoami");
    assert.equal(jose.decodeJwt(deskViaCombo["x-gatehouse-assertion"]).aud, `${s.gw.url}/desk`);
    // Reused within the minute for the same person and server; never another person's.
    assert.equal((await call2026(s, alice, "crm"))["x-gatehouse-assertion"], assertion);
    const bobs = (await call2026(s, bob, "crm"))["x-gatehouse-assertion"];
    assert.notEqual(bobs, assertion);
    assert.equal(jose.decodeJwt(bobs).sub, "oidc:bob-example-com");
    // The JWKS is not the authorization server's: its metadata names no jwks_uri.
    const metadata = await (await fetch(`${s.gw.url}/.well-known/oauth-authorization-server`))
      .json();
    assert.equal(metadata.jwks_uri, undefined);
  });
});

Deno.test("identity headers a client sends never reach a backend", async (t) => {
  await withGateway(async (s) => {
    const alice = await signIn(s, "alice@example.com", ["eng"]);
    for (const name of NAMES) {
      await t.step(name, async () => {
        const forged = { [name]: "mallory" };
        for (const call of [call2026, call2025]) {
          const plain = await call(s, alice, "plain", "whoami", forged);
          assert.equal(plain[name], undefined, `${call.name}: not forwarded to plain`);
          const crm = await call(s, alice, "crm", "whoami", forged);
          assert.notEqual(crm[name], "mallory", `${call.name}: the gateway's own value on crm`);
          assert.ok(crm[name], `${call.name}: crm is told ${name}`);
        }
      });
    }
  });
});

/** The environment of the process of `server` that answered the person's `pid` call. */
async function environment(s: Setup, person: Person, server = "local") {
  const response = await fetch(`${s.gw.url}/${server}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${person.token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": "pid",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name: "pid",
        arguments: {},
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    }),
  });
  const body = await response.json();
  assert.ok(body.result, JSON.stringify(body));
  const pid = body.result.content[0].text;
  const entries = (await Deno.readTextFile(`/proc/${pid}/environ`)).split("\0");
  return Object.fromEntries(entries.filter(Boolean).map((e) => e.split(/=(.*)/s).slice(0, 2)));
}

Deno.test("a stdio backend gets each person's groups as {{user.groups}} in its environment", async () => {
  await withGateway(async (s) => {
    const alice = await signIn(s, "alice@example.com", ["eng", "R&D, Paris"]);
    const bob = await signIn(s, "bob@example.com");
    const [a, b] = await Promise.all([environment(s, alice), environment(s, bob)]);
    assert.equal(a.WHO, "oidc:alice-example-com");
    assert.equal(a.TEAMS, "eng,R&D%2C%20Paris");
    assert.equal(b.WHO, "oidc:bob-example-com");
    assert.equal(b.TEAMS, "");
  });
});

Deno.test("a legacy SSE backend is told who calls on its stream and on every message", async () => {
  await withGateway(async (s) => {
    const alice = await signIn(s, "alice@example.com", ["eng"]);
    for (const call of [call2026, call2025]) {
      const told = await call(s, alice, "legacy", "whoami", { "x-gatehouse-user": "mallory" });
      assert.equal(told["x-gatehouse-user"], "oidc:alice-example-com");
      assert.equal(told["x-gatehouse-groups"], "eng");
      await jose.jwtVerify(told["x-gatehouse-assertion"], jwks(s), {
        audience: `${s.gw.url}/legacy`,
      });
    }
    const stream = s.sse.seen.filter((seen) => seen.method === "GET /sse");
    assert.ok(stream.length > 0);
    for (const seen of s.sse.seen) {
      assert.equal(seen.headers["x-gatehouse-user"], "oidc:alice-example-com", seen.method);
    }
  });
});

Deno.test("two clients of one person are each named as the client, on a server and through an aggregate (2026 links per client)", async () => {
  await withGateway(async (s) => {
    const first = await signIn(s, "alice@example.com", ["eng"]);
    const second = await signIn(s, "alice@example.com", ["eng"]);
    assert.notEqual(first.clientId, second.clientId);
    for (const [server, tool] of [["crm", "whoami"], ["combo", "crm.whoami"]]) {
      for (const person of [first, second, first]) {
        const told = await call2026(s, person, server, tool);
        assert.equal(told["x-gatehouse-client"], person.clientId, `${server} ${tool}`);
        assert.equal(jose.decodeJwt(told["x-gatehouse-assertion"]).client_id, person.clientId);
      }
    }
  });
});

Deno.test("a person's own process (share: person) is started again when their groups changed, never kept with the old ones", async () => {
  await withGateway(async (s) => {
    const before = await signIn(s, "alice@example.com", ["editors"]);
    assert.equal((await environment(s, before, "mine")).TEAMS, "editors");
    // Taken out of editors at the provider: her next sign-in carries no group.
    const after = await signIn(s, "alice@example.com", []);
    const now = await environment(s, after, "mine");
    assert.equal(now.WHO, "oidc:alice-example-com");
    assert.equal(now.TEAMS, "", "her process no longer says she is an editor");
    // A session (2025-11-25) of hers joins the process started with what she has now as well.
    const client = await connectClient(s.gw.url, "mine", "streamable", after.token);
    try {
      const called = await client.callTool({ name: "pid", arguments: {} });
      const pid = (called.content as { text: string }[])[0].text;
      const environ = await Deno.readTextFile(`/proc/${pid}/environ`);
      assert.ok(environ.split("\0").includes("TEAMS="), "the session's process: no editors");
    } finally {
      await client.close();
    }
  });
});

Deno.test("a person whose email changed at the provider (the same subject) is told the new one by their 2026 link and process", async () => {
  await withGateway(async (s) => {
    const before = await signIn(s, "alice@example.com", ["eng"], "alice");
    assert.equal((await environment(s, before, "mine")).MAIL, "alice@example.com");
    const after = await signIn(s, "alice.smith@example.com", ["eng"], "alice");
    const now = await environment(s, after, "mine");
    assert.equal(now.WHO, "oidc:alice");
    assert.equal(now.MAIL, "alice.smith@example.com");
  });
});

Deno.test("an aggregate keeps a person's member lists per the groups they have now, not those they lost", async () => {
  await withGateway(async (s) => {
    const listed = async (person: Person) => {
      const response = await listTools2026(`${s.gw.url}/teams-all/mcp`, person.token);
      const body = await response.json();
      assert.ok(body.result, JSON.stringify(body));
      return (body.result.tools as { name: string }[]).map((tool) => tool.name)
        .filter((name) => name.startsWith("teams.team_"));
    };
    const before = await signIn(s, "alice@example.com", ["editors"]);
    assert.deepEqual(await listed(before), ["teams.team_editors"]);
    const after = await signIn(s, "alice@example.com", []);
    assert.deepEqual(await listed(after), ["teams.team_"], "the list of the groups she has now");
  });
});

Deno.test("{{user.email}} and {{user.id}} in headers: reach the backend header-safe, whatever they hold", async () => {
  await withGateway(async (s) => {
    const person = await signIn(s, "zoë.李@example.com", [], "li\r\nx-gatehouse-user: mallory");
    for (const call of [call2026, call2025]) {
      const told = await call(s, person, "plain");
      assert.equal(told["x-gatehouse-mail"], "zo%C3%AB.%E6%9D%8E@example.com");
      assert.equal(told["x-gatehouse-who"], "oidc:li%0D%0Ax-gatehouse-user:%20mallory");
      assert.equal(told["x-gatehouse-user"], undefined);
    }
  });
});

Deno.test("a backend that refuses the identity headers as too large (many groups) is named so, with its status", async () => {
  await withGateway(async (s) => {
    const groups = Array.from({ length: 200 }, (_, i) => `0f8fad5b-d9cb-469f-a165-70867728${i}`);
    const person = await signIn(s, "alice@example.com", groups);
    const client = await connectClient(s.gw.url, "nodeapp", "streamable", person.token)
      .then(() => undefined, (error: Error) => error);
    assert.match(String(client), /HTTP 431 Request Header Fields Too Large/);
  });
});

Deno.test("identity.groups tells a backend only the groups it names, so a person with hundreds of long group names fits a 16 kB header limit", async () => {
  await withGateway(async (s) => {
    // 196 names of 60 characters, and 4 more: the 200 a sign-in keeps at most (idp/groups.ts).
    const many = Array.from({ length: 196 }, (_, i) => `org-unit-${i}-`.padEnd(60, "x"));
    const groups = ["eng-ledger", "R&D, Paris", "Eng-upper", "eng", ...many];
    const person = await signIn(s, "alice@example.com", groups);
    for (const call of [call2026, call2025]) {
      const told = await call(s, person, "crmeng");
      assert.equal(told["x-gatehouse-groups"], "eng-ledger,R&D%2C%20Paris");
      const { payload } = await jose.jwtVerify(told["x-gatehouse-assertion"], jwks(s), {
        audience: `${s.gw.url}/crmeng`,
      });
      assert.deepEqual(payload.groups, ["eng-ledger", "R&D, Paris"]);
      // Without the list, as before: every group.
      const all = await call(s, person, "crm");
      assert.equal(all["x-gatehouse-groups"].split(",").length, groups.length);
      assert.deepEqual(jose.decodeJwt(all["x-gatehouse-assertion"]).groups, groups);
    }
    // Node's 16 kB limit: refused (431) with every group, read (its 404 for any path) with
    // those identity.groups names.
    const failure = (server: string) =>
      connectClient(s.gw.url, server, "streamable", person.token)
        .then(() => "connected", (error: Error) => String(error));
    assert.match(await failure("nodeapp"), /HTTP 431/);
    const narrowed = await failure("nodeeng");
    assert.doesNotMatch(narrowed, /431/);
    assert.match(narrowed, /HTTP 404/);
  });
});

Deno.test("a 2025 session is not continued with a token whose groups differ from those it was opened with: its backend would go on being told the old ones", async () => {
  await withGateway(async (s) => {
    const editor = await signIn(s, "alice@example.com", ["editors"]);
    const { post } = await open2025(s, editor, "crm");
    // Taken out of editors: her next sign-in's token no longer continues the editor's session.
    const after = await signIn(s, "alice@example.com", []);
    const call = {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "whoami", arguments: {} },
    };
    const stale = await post(call, after);
    await stale.body?.cancel();
    assert.equal(stale.status, 404, "the session is unknown to a token with other groups");
    assert.equal((await call2025(s, after, "crm"))["x-gatehouse-groups"], "");
    // The token it was opened with still continues it.
    const same = await post(call, editor);
    assert.equal(same.status, 200);
    await same.body?.cancel();
  });
});

Deno.test("a backend redirecting to another origin is not followed there, in either revision: the person's identity stays with the backend it is for", async () => {
  await withGateway(async (s) => {
    const alice = await signIn(s, "alice@example.com", ["eng"]);
    await assert.rejects(
      call2026(s, alice, "hop"),
      /redirects to .* which the gateway does not follow/,
    );
    await assert.rejects(call2025(s, alice, "hop"), /initialize answered 502/);
    await assert.rejects(call2026(s, alice, "hop26"), /answered HTTP 307/);
    const auds = [`${s.gw.url}/hop`, `${s.gw.url}/hop26`];
    const leaked = s.backend.seen.filter((seen) => {
      const assertion = seen.headers["x-gatehouse-assertion"];
      return assertion !== undefined && auds.includes(jose.decodeJwt(assertion).aud as string);
    });
    assert.deepEqual(leaked, [], "hop's assertion reached another origin");
  });
});
