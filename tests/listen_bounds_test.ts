/**
 * What bounds a 2026-07-28 client's `subscriptions/listen` in front of a real 2025 backend:
 * the listen belongs to the grant of its own request and ends when that grant is revoked,
 * even on a link another client's grant opened; and the resource URIs a listen, and a person's
 * listens together, may watch are capped (limits.listenUris, limits.listenUrisPerUser), their
 * subscriptions sent a few at a time.
 */
import assert from "node:assert/strict";
import {
  LEGACY_EVERYTHING_STDIO,
  listenForGateway,
  startGateway,
  type TestGateway,
} from "./fixtures/gateway.ts";
import { TOGETHER_URIS } from "./fixtures/legacy_everything_server.ts";
import { startIdp } from "./fixtures/idp.ts";
import { idpSection, TEST_MASTER_SECRET } from "./fixtures/oauth_gateway.ts";
import { exchangeCode, obtainCode, registerClient } from "./fixtures/oauth_raw.ts";
import { mcpHeaders, post } from "./fixtures/raw.ts";
import { UserAgent } from "./fixtures/user_agent.ts";
import { waitUntil, within } from "./fixtures/waits.ts";

const VERSION = "2026-07-28";
const META = {
  "io.modelcontextprotocol/protocolVersion": VERSION,
  "io.modelcontextprotocol/clientCapabilities": {},
};

function headers(method: string, token?: string, name?: string) {
  return mcpHeaders({
    "mcp-protocol-version": VERSION,
    "mcp-method": method,
    ...(name ? { "mcp-name": name } : {}),
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  });
}

/** A tools/call of `name` as a 2026 client with `token` (none on a public server). */
async function callTool(gw: TestGateway, name: string, token?: string) {
  const body = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, _meta: META } };
  return await post(`${gw.url}/legacy/mcp`, body, headers("tools/call", token, name));
}

/** Opens a listen; its HTTP answer (an SSE stream, or a JSON refusal). */
async function listen(
  gw: TestGateway,
  id: string,
  notifications: Record<string, unknown>,
  token?: string,
): Promise<Response> {
  return await within(
    `the answer to listen ${id}`,
    fetch(`${gw.url}/legacy/mcp`, {
      method: "POST",
      headers: headers("subscriptions/listen", token),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "subscriptions/listen",
        params: { _meta: META, notifications },
      }),
    }),
  );
}

/** A listen's JSON refusal; fails at once when the listen was accepted instead. */
async function refusalOf(response: Response) {
  const type = response.headers.get("content-type");
  if (type === "text/event-stream") {
    await response.body?.cancel();
    assert.fail("the listen was accepted; a refusal was expected");
  }
  return await within("the listen's refusal", response.json());
}

/**
 * Reads SSE messages off `body` as they come; undefined once the stream has ended. Each
 * message has one deadline: keep-alive comments do not extend it.
 */
function messages(body: ReadableStream<Uint8Array>) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const read = async (): Promise<Record<string, unknown> | undefined> => {
    for (;;) {
      const end = buffer.indexOf("\n\n");
      if (end >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = event.split("\n").filter((line) => line.startsWith("data: "))
          .map((line) => line.slice(6)).join("\n");
        if (data) return JSON.parse(data);
        continue;
      }
      const { value, done } = await reader.read();
      if (done) return undefined;
      buffer += value;
    }
  };
  return {
    next: () => within("the next listen message", read()),
    cancel: () => reader.cancel(),
  };
}

Deno.test("revoking a client's grant ends its listen, though another client's grant opened the link under it", async () => {
  const socket = await listenForGateway();
  const idp = await startIdp([`${socket.url}/oauth/callback`]);
  let gw: TestGateway | undefined;
  let stream: ReturnType<typeof messages> | undefined;
  try {
    gw = await socket.start(
      `
baseUrl: http://127.0.0.1:{{PORT}}
secret: ${TEST_MASTER_SECRET}
servers:
  legacy:
    transport: stdio
    ${LEGACY_EVERYTHING_STDIO}
oauth:
${idpSection(idp)}
`,
      { IDP_SECRET: idp.clientSecret },
    );
    const base = gw.url;
    // One person, two clients: each its own grant.
    const agent = new UserAgent();
    const signIn = async () => {
      const client = await registerClient(base);
      const code = (await obtainCode(agent, base, client.client_id, `${base}/legacy`))
        .get("code")!;
      const tokens = (await exchangeCode(base, client.client_id, code)).json;
      return { clientId: client.client_id, access: tokens.access_token as string, tokens };
    };
    const second = await signIn();
    const first = await signIn();

    // The second client's request opens the person's link; the first client listens on it.
    assert.equal((await callTool(gw, "test_simple_text", second.access)).status, 200);
    const opened = await listen(gw, "listen-1", { toolsListChanged: true }, first.access);
    assert.equal(opened.status, 200);
    stream = messages(opened.body!);
    assert.equal((await stream.next())?.method, "notifications/subscriptions/acknowledged");
    const session = /"msg":"session opened","session":"([0-9a-f]+)"/.exec(gw.logs.join("\n"))![1];
    const link = gw.gateway.sessions.get(session as never)!;
    assert.equal(link.openStreams, 1, "the listen holds the link");

    const revoked = await fetch(`${base}/revoke`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        client_id: first.clientId,
        token: first.tokens.refresh_token,
      }),
    });
    assert.equal(revoked.status, 200);
    await revoked.body?.cancel();

    // Its answer says why, and the stream ends: no list change made afterwards reaches it.
    const answer = await stream.next();
    assert.equal(answer?.id, "listen-1");
    assert.match(
      (answer?.error as { message: string }).message,
      /the grant this listen was opened with was revoked: sign in again/,
    );
    assert.equal((await callTool(gw, "test_trigger_tool_change", second.access)).status, 200);
    assert.equal(await stream.next(), undefined, "nothing after the listen's answer");
    assert.equal((await callTool(gw, "test_simple_text", first.access)).status, 401);

    // The link lives on for the second client, no longer held open by the revoked listen.
    assert.ok(!link.closed);
    await waitUntil("the revoked listen to let go of the link", () => link.openStreams === 0);
    assert.equal((await callTool(gw, "test_simple_text", second.access)).status, 200);
  } finally {
    await stream?.cancel();
    if (gw) await gw.close();
    else await socket.close();
    await idp.close();
  }
});

Deno.test("resource URIs are capped per listen and per person, with the key to raise; their subscriptions go out together", async () => {
  const gw = await startGateway(`
limits: { requestTimeout: 20s, listenUris: 4, listenUrisPerUser: 6 }
servers:
  legacy:
    transport: stdio
    ${LEGACY_EVERYTHING_STDIO}
    public: true
`);
  const streams: ReturnType<typeof messages>[] = [];
  const uris = (prefix: string, count: number) =>
    Array.from({ length: count }, (_, i) => `${prefix}${i}`);
  try {
    const tooMany = await listen(gw, "big", { resourceSubscriptions: uris("test://r/", 5) });
    assert.equal(tooMany.status, 200);
    const refusal = await refusalOf(tooMany);
    assert.equal(refusal.id, "big");
    assert.equal(refusal.error.code, -32602);
    assert.match(refusal.error.message, /names 5 resource URIs .* at most 4 .*limits\.listenUris/);
    assert.deepEqual(refusal.error.data, { limit: "limits.listenUris", max: 4, asked: 5 });

    // Four URIs the fixture answers only when two of their subscriptions wait at once: a
    // listen that subscribed one at a time would never be acknowledged.
    const first = await listen(gw, "first", { resourceSubscriptions: uris(TOGETHER_URIS, 4) });
    assert.equal(first.headers.get("content-type"), "text/event-stream");
    streams.push(messages(first.body!));
    assert.equal((await streams[0].next())?.method, "notifications/subscriptions/acknowledged");

    // 4 watched; 3 more would pass the person's 6.
    const over = await listen(gw, "over", { resourceSubscriptions: uris("test://o/", 3) });
    const overBody = await refusalOf(over);
    assert.equal(overBody.error.code, -32000);
    assert.match(
      overBody.error.message,
      /already watch 4 resource URIs and this one names 3; at most 6 .*limits\.listenUrisPerUser/,
    );
    assert.deepEqual(overBody.error.data, {
      limit: "limits.listenUrisPerUser",
      max: 6,
      watched: 4,
    });

    // Two more fit, and resource updates reach that listen through the backend subscription.
    const second = await listen(gw, "second", {
      resourceSubscriptions: ["test://watched-resource", "test://o/1"],
    });
    streams.push(messages(second.body!));
    assert.equal((await streams[1].next())?.method, "notifications/subscriptions/acknowledged");
    assert.equal((await callTool(gw, "test_trigger_resource_update")).status, 200);
    assert.equal((await streams[1].next())?.method, "notifications/resources/updated");

    // Ending a listen gives its URIs back to the person.
    await streams.shift()!.cancel();
    await waitUntil("the ended listen's URIs to be given back", async () => {
      const again = await listen(gw, "again", { resourceSubscriptions: uris("test://o/", 3) });
      if (again.headers.get("content-type") !== "text/event-stream") {
        await again.body?.cancel();
        return false;
      }
      streams.push(messages(again.body!));
      return true;
    });
  } finally {
    for (const stream of streams) await stream.cancel();
    await gw.close();
  }
});

Deno.test("a grant revoked on another replica ends its listen here once this replica's revocation poll sees it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-listen-revoke-" });
  const a = await listenForGateway();
  const b = await listenForGateway();
  const idp = await startIdp([`${a.url}/oauth/callback`]);
  // Two replicas as in production: one base URL and secret, one KV file.
  const yaml = `
baseUrl: ${a.url}
storage: ${dir}/gatehouse.kv
secret: ${TEST_MASTER_SECRET}
servers:
  legacy:
    transport: stdio
    ${LEGACY_EVERYTHING_STDIO}
oauth:
${idpSection(idp)}
`;
  const env = { IDP_SECRET: idp.clientSecret };
  const replicas: TestGateway[] = [];
  let stream: ReturnType<typeof messages> | undefined;
  try {
    replicas.push(await a.start(yaml, env, { storage: `${dir}/gatehouse.kv` }));
    replicas.push(await b.start(yaml, env, { storage: `${dir}/gatehouse.kv` }));
    const [gwA, gwB] = replicas;
    // One person, two clients; the second client's request opens the person's link on B.
    const agent = new UserAgent();
    const signIn = async () => {
      const client = await registerClient(gwA.url);
      const code = (await obtainCode(agent, gwA.url, client.client_id, `${gwA.url}/legacy`))
        .get("code")!;
      return { client, tokens: (await exchangeCode(gwA.url, client.client_id, code)).json };
    };
    const second = await signIn();
    const { client, tokens } = await signIn();
    assert.equal(
      (await callTool(gwB, "test_simple_text", second.tokens.access_token)).status,
      200,
    );

    const opened = await listen(gwB, "on-b", { toolsListChanged: true }, tokens.access_token);
    stream = messages(opened.body!);
    assert.equal((await stream.next())?.method, "notifications/subscriptions/acknowledged");
    const revoked = await fetch(`${gwA.url}/revoke`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ client_id: client.client_id, token: tokens.refresh_token }),
    });
    assert.equal(revoked.status, 200);
    await revoked.body?.cancel();
    // Replica B reads the revocations every 2 s; the listen's answer comes with the next read.
    const answer = await stream.next();
    assert.equal(answer?.id, "on-b");
    assert.match((answer?.error as { message: string }).message, /was revoked: sign in again/);
    assert.equal(await stream.next(), undefined);
    assert.equal(
      (await callTool(gwB, "test_simple_text", second.tokens.access_token)).status,
      200,
      "the second client's link on B lives on",
    );
  } finally {
    await stream?.cancel();
    for (const gw of replicas) await gw.close();
    if (replicas.length < 2) await b.close();
    if (replicas.length < 1) await a.close();
    await idp.close();
    await Deno.remove(dir, { recursive: true });
  }
});
