/**
 * A 2026-07-28 client in front of a backend that speaks 2026-07-28 too: each request reaches
 * the backend as the client sent it (its own `_meta`), the answer comes back as the backend
 * wrote it, and the backend's `requestState` reaches the client sealed by the gateway for that
 * person, server and request. Both backend transports: the person's own stdio child, and HTTP.
 */
import assert from "node:assert/strict";
import { MODERN_EVERYTHING_STDIO, startGateway, type TestGateway } from "./fixtures/gateway.ts";
import { startModernFixture } from "./fixtures/modern_server.ts";
import { mcpHeaders, post } from "./fixtures/raw.ts";
import { connectV2Client } from "./fixtures/v2_client.ts";
import { openKvStore } from "../src/store/kv.ts";

const ALICE = "alice-token-0123456789abcdef";
const BOB = "bob-token-0123456789abcdef0";
const VERSION = "2026-07-28";
const ALL_CAPABILITIES = { elicitation: { form: {} }, sampling: {}, roots: {} };

type Answer = {
  status: number;
  text: string;
  json: {
    id: unknown;
    result?: Record<string, unknown>;
    error?: { code: number; message: string; data?: unknown };
  };
};

function config(backend: string): string {
  return `
limits: { requestTimeout: 20s }
servers:
  modern:
    ${backend}
    serviceAuths: [{ type: bearer, tokens: ["${ALICE}", "${BOB}"] }]
`;
}

async function call(
  gw: TestGateway,
  token: string,
  id: number,
  name: string,
  extra: Record<string, unknown> = {},
  meta: Record<string, unknown> = {},
): Promise<Answer> {
  const body = {
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: {
      name,
      arguments: {},
      ...extra,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": ALL_CAPABILITIES,
        ...meta,
      },
    },
  };
  const headers = mcpHeaders({
    authorization: `Bearer ${token}`,
    "mcp-protocol-version": VERSION,
    "mcp-method": "tools/call",
    "mcp-name": name,
  });
  return await post(`${gw.url}/modern/mcp`, body, headers) as Answer;
}

/** The two ways to the 2026-only fixture; `close` ends what the case started. */
const BACKENDS = {
  stdio: () =>
    Promise.resolve({
      yaml: `transport: stdio\n    ${MODERN_EVERYTHING_STDIO}`,
      close: () => Promise.resolve(),
    }),
  http: async () => {
    const fixture = await startModernFixture();
    return {
      yaml: `transport: streamable-http\n    url: ${fixture.url}`,
      close: () => fixture.close(),
    };
  },
};

for (const [kind, start] of Object.entries(BACKENDS)) {
  Deno.test(`a 2026 client's answers sent before being asked reach a 2026 ${kind} backend as sent`, async () => {
    const backend = await start();
    const gw = await startGateway(config(backend.yaml));
    try {
      // Through a translation, answers to a question not yet asked would be lost; passed as
      // the client sent them, the backend finds its answer on the first call.
      const first = await call(gw, ALICE, 1, "test_input_required_result_elicitation", {
        inputResponses: { user_name: { action: "accept", content: { name: "Alice" } } },
      });
      assert.equal(first.status, 200, first.text);
      assert.equal(first.json.result?.resultType, "complete", first.text);
      assert.match(JSON.stringify(first.json.result!.content), /Alice/);
    } finally {
      await gw.close();
      await backend.close();
    }
  });

  Deno.test(`a 2026 ${kind} backend's requestState reaches the client sealed, bound to the person`, async () => {
    const backend = await start();
    const gw = await startGateway(config(backend.yaml));
    try {
      const name = "test_input_required_result_multi_round";
      const one = await call(gw, ALICE, 1, name);
      assert.equal(one.json.result?.resultType, "input_required", one.text);
      assert.deepEqual(Object.keys(one.json.result!.inputRequests as object), ["step1"]);
      const state = one.json.result!.requestState as string;
      assert.equal(typeof state, "string");

      // Another person, or a changed state, is refused by the gateway (its own words).
      const stolen = await call(gw, BOB, 2, name, {
        inputResponses: { step1: { action: "accept", content: { name: "Bob" } } },
        requestState: state,
      });
      assert.equal(stolen.json.error?.code, -32602, stolen.text);
      assert.match(stolen.json.error!.message, /integrity check/);
      const tampered = await call(gw, ALICE, 3, name, {
        inputResponses: { step1: { action: "accept", content: { name: "Alice" } } },
        requestState: `${state.slice(0, -4)}AAAA`,
      });
      assert.equal(tampered.json.error?.code, -32602, tampered.text);
      assert.match(tampered.json.error!.message, /integrity check/);

      // The genuine rounds go on: each state the client holds opens to the backend's own.
      const two = await call(gw, ALICE, 4, name, {
        inputResponses: { step1: { action: "accept", content: { name: "Alice" } } },
        requestState: state,
      });
      assert.equal(two.json.result?.resultType, "input_required", two.text);
      assert.deepEqual(Object.keys(two.json.result!.inputRequests as object), ["step2"]);
      const three = await call(gw, ALICE, 5, name, {
        inputResponses: { step2: { action: "accept", content: { color: "green" } } },
        requestState: two.json.result!.requestState,
      });
      assert.equal(three.json.result?.resultType, "complete", three.text);
      assert.match(JSON.stringify(three.json.result!.content), /Alice likes green/);
    } finally {
      await gw.close();
      await backend.close();
    }
  });

  Deno.test(`progress of a call to a 2026 ${kind} backend reaches the client under its own token`, async () => {
    const backend = await start();
    const gw = await startGateway(config(backend.yaml));
    try {
      const answer = await call(gw, ALICE, 7, "test_tool_with_progress", {}, {
        progressToken: "mine-42",
      });
      assert.equal(answer.status, 200);
      const events = answer.text.split("\n").filter((line) => line.startsWith("data: "))
        .map((line) => JSON.parse(line.slice(6)));
      const progress = events.filter((event) => event.method === "notifications/progress");
      assert.deepEqual(progress.map((event) => event.params.progressToken), [
        "mine-42",
        "mine-42",
        "mine-42",
      ]);
      assert.deepEqual(progress.map((event) => event.params.progress), [0, 50, 100]);
      assert.equal(events.at(-1).id, 7);
      assert.equal(events.at(-1).result.resultType, "complete");
    } finally {
      await gw.close();
      await backend.close();
    }
  });
}

Deno.test("the v2 SDK client pinned to 2026-07-28 answers a 2026 backend's questions through the gateway", async () => {
  const gw = await startGateway(config(`transport: stdio\n    ${MODERN_EVERYTHING_STDIO}`));
  const v2 = await connectV2Client(`${gw.url}/modern/mcp`, { negotiation: "pinned", token: ALICE });
  try {
    const result = await v2.client.callTool({
      name: "test_input_required_result_multiple_inputs",
      arguments: {},
    });
    assert.equal(result.isError, undefined, JSON.stringify(result));
    assert.deepEqual(
      [...v2.answered].sort(),
      ["elicitation/create", "roots/list", "sampling/createMessage"],
    );
  } finally {
    await v2.close();
    await gw.close();
  }
});

Deno.test("two replicas: behind a 2026 HTTP backend, a retry completes on the other replica", async () => {
  const fixture = await startModernFixture();
  const kv = await openKvStore(":memory:");
  const yaml = (replica: string) =>
    `replicaId: ${replica}\n${config(`transport: streamable-http\n    url: ${fixture.url}`)}`;
  // One storage, so one master secret: a state sealed on one replica opens on the other.
  const a = await startGateway(yaml("a"), {}, { store: kv });
  const b = await startGateway(yaml("b"), {}, { store: kv });
  try {
    const name = "test_input_required_result_elicitation";
    const asked = await call(a, ALICE, 1, name);
    assert.equal(asked.json.result?.resultType, "input_required", asked.text);
    const done = await call(b, ALICE, 2, name, {
      inputResponses: { user_name: { action: "accept", content: { name: "Alice" } } },
      requestState: asked.json.result!.requestState,
    });
    assert.equal(done.json.result?.resultType, "complete", done.text);
    assert.match(JSON.stringify(done.json.result!.content), /Alice/);
  } finally {
    await a.close();
    await b.close();
    kv.close();
    await fixture.close();
  }
});
