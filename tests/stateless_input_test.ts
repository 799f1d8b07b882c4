/**
 * A 2025 backend asks its client for input during a call (elicitation, sampling, roots); a
 * 2026-07-28 client behind the gateway gets that as `input_required` with a sealed
 * `requestState`, answers in its retry, and the backend's call goes on where it stood.
 */
import assert from "node:assert/strict";
import { LEGACY_EVERYTHING_STDIO, startGateway, type TestGateway } from "./fixtures/gateway.ts";
import { mcpHeaders, post } from "./fixtures/raw.ts";
import { connectV2Client } from "./fixtures/v2_client.ts";
import { openKvStore } from "../src/store/kv.ts";
import { waitUntil } from "./fixtures/waits.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const TOKEN = "alice-token-0123456789abcdef";
const CONFIG = `
limits: { requestTimeout: 20s }
servers:
  legacy:
    transport: stdio
    ${LEGACY_EVERYTHING_STDIO}
    serviceAuths: [{ type: bearer, tokens: ["${TOKEN}"] }]
`;
const VERSION = "2026-07-28";
const ALL_CAPABILITIES = { elicitation: { form: {} }, sampling: {}, roots: {} };

type Answer = {
  status: number;
  json: {
    id: unknown;
    result?: Record<string, unknown>;
    error?: { code: number; message: string; data?: unknown };
  };
};

async function call(
  gw: TestGateway,
  id: number,
  name: string,
  extra: Record<string, unknown> = {},
  capabilities: Record<string, unknown> = ALL_CAPABILITIES,
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
        "io.modelcontextprotocol/clientCapabilities": capabilities,
      },
    },
  };
  const headers = mcpHeaders({
    authorization: `Bearer ${TOKEN}`,
    "mcp-protocol-version": VERSION,
    "mcp-method": "tools/call",
    "mcp-name": name,
  });
  return await post(`${gw.url}/legacy/mcp`, body, headers) as Answer;
}

Deno.test("a backend's elicitation reaches a 2026 client as input_required, and the retry completes the call", async () => {
  const gw = await startGateway(CONFIG);
  try {
    const first = await call(gw, 1, "test_input_required_result_elicitation");
    assert.equal(first.status, 200);
    const asked = first.json.result!;
    assert.equal(asked.resultType, "input_required", JSON.stringify(first.json));
    const requests = asked.inputRequests as Record<string, { method: string }>;
    assert.deepEqual(Object.keys(requests), ["user_name"]);
    assert.equal(requests.user_name.method, "elicitation/create");
    assert.equal(typeof asked.requestState, "string");

    const retry = await call(gw, 2, "test_input_required_result_elicitation", {
      inputResponses: { user_name: { action: "accept", content: { name: "Alice" } } },
      requestState: asked.requestState,
    });
    assert.equal(retry.status, 200);
    assert.equal(retry.json.id, 2);
    assert.equal(retry.json.result!.resultType, "complete", JSON.stringify(retry.json));
    assert.match(JSON.stringify(retry.json.result!.content), /Alice/);

    // The state answered once; a replay finds nothing waiting.
    const replay = await call(gw, 3, "test_input_required_result_elicitation", {
      inputResponses: { user_name: { action: "accept", content: { name: "Mallory" } } },
      requestState: asked.requestState,
    });
    assert.equal(replay.json.error?.code, -32602);
    assert.match(replay.json.error!.message, /no longer waiting/);
  } finally {
    await gw.close();
  }
});

Deno.test("a tampered or foreign requestState is refused and reaches no backend", async () => {
  const gw = await startGateway(CONFIG);
  try {
    const first = await call(gw, 1, "test_input_required_result_elicitation");
    const state = first.json.result!.requestState as string;
    const tampered = await call(gw, 2, "test_input_required_result_elicitation", {
      inputResponses: { user_name: { action: "accept", content: { name: "x" } } },
      requestState: `${state}-TAMPERED`,
    });
    assert.equal(tampered.json.error?.code, -32602);
    assert.match(tampered.json.error!.message, /integrity check/);
    const otherTool = await call(gw, 3, "test_input_required_result_sampling", {
      inputResponses: {},
      requestState: state,
    });
    assert.equal(otherTool.json.error?.code, -32602);
    assert.match(otherTool.json.error!.message, /another method or other params/);
    // The genuine retry still works: refusals took nothing.
    const retry = await call(gw, 4, "test_input_required_result_elicitation", {
      inputResponses: { user_name: { action: "accept", content: { name: "Alice" } } },
      requestState: state,
    });
    assert.equal(retry.json.result?.resultType, "complete", JSON.stringify(retry.json));
  } finally {
    await gw.close();
  }
});

Deno.test("several rounds of input, and several inputs in one round", async () => {
  const gw = await startGateway(CONFIG);
  try {
    const one = await call(gw, 1, "test_input_required_result_multi_round");
    assert.deepEqual(Object.keys(one.json.result!.inputRequests as object), ["step1"]);
    const two = await call(gw, 2, "test_input_required_result_multi_round", {
      inputResponses: { step1: { action: "accept", content: { name: "Ada" } } },
      requestState: one.json.result!.requestState,
    });
    assert.deepEqual(Object.keys(two.json.result!.inputRequests as object), ["step2"]);
    assert.notEqual(two.json.result!.requestState, one.json.result!.requestState);
    const three = await call(gw, 3, "test_input_required_result_multi_round", {
      inputResponses: { step2: { action: "accept", content: { color: "green" } } },
      requestState: two.json.result!.requestState,
    });
    assert.equal(three.json.result?.resultType, "complete", JSON.stringify(three.json));
    assert.match(JSON.stringify(three.json.result!.content), /Ada/);

    const many = await call(gw, 4, "test_input_required_result_multiple_inputs");
    const kinds = Object.values(
      many.json.result!.inputRequests as Record<string, { method: string }>,
    )
      .map((request) => request.method).sort();
    assert.deepEqual(kinds, ["elicitation/create", "roots/list", "sampling/createMessage"]);
  } finally {
    await gw.close();
  }
});

Deno.test("a client that did not declare what the backend asks gets -32021 naming it", async () => {
  const gw = await startGateway(CONFIG);
  try {
    const refused = await call(gw, 1, "test_input_required_result_sampling", {}, {
      elicitation: { form: {} },
    });
    assert.equal(refused.status, 400);
    assert.equal(refused.json.error?.code, -32021);
    assert.deepEqual(refused.json.error?.data, { requiredCapabilities: { sampling: {} } });
  } finally {
    await gw.close();
  }
});

Deno.test("a call the gateway cancels frees the person's link: the next call that may take input needs no second backend", async () => {
  // Regression: a cancelled call waited for an answer no backend sends, holding its link's
  // input slot, so every later such call started another backend (seconds under load; the
  // conformance run's 600 ms checks then failed).
  const gw = await startGateway(CONFIG.replace("requestTimeout: 20s", "requestTimeout: 1s"));
  try {
    const refused = await call(gw, 1, "test_input_required_result_sampling", {}, {
      elicitation: { form: {} },
    });
    assert.equal(refused.json.error?.code, -32021);
    const next = await call(gw, 2, "test_input_required_result_elicitation");
    assert.equal(next.json.result?.resultType, "input_required", JSON.stringify(next.json));
    assert.equal(gw.gateway.sessions.size, 1, "the refused call left its link free");

    // A client that never retries: its call is cancelled when its state expires, and the
    // link is free again for the person's next call.
    await waitUntil(
      "the unanswered call to be given up",
      () => gw.gateway.links.waiting.size === 0,
    );
    const after = await call(gw, 3, "test_input_required_result_sampling");
    assert.equal(after.json.result?.resultType, "input_required", JSON.stringify(after.json));
    assert.equal(gw.gateway.sessions.size, 1, "the abandoned call left its link free");
  } finally {
    await gw.close();
  }
});

Deno.test("the v2 SDK client pinned to 2026-07-28 answers a 2025 backend's requests through the gateway", async () => {
  const gw = await startGateway(CONFIG);
  const v2 = await connectV2Client(`${gw.url}/legacy/mcp`, { negotiation: "pinned", token: TOKEN });
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

Deno.test("a 2026 client uses an aggregate of 2025 members, and a member's question reaches it as input_required", async () => {
  const gw = await startGateway(`
limits: { requestTimeout: 20s }
servers:
  legacy:
    transport: stdio
    ${LEGACY_EVERYTHING_STDIO}
    public: true
  small: { transport: stdio, command: deno, env: { ${DENO_DIR_YAML} }, args: [run, "${ROOT}tests/fixtures/minimal_server.ts"], public: true }
  both: { transport: aggregate, servers: [legacy, small], public: true }
`);
  const v2 = await connectV2Client(`${gw.url}/both/mcp`, { negotiation: "pinned" });
  try {
    const { tools } = await v2.client.listTools();
    const names = tools.map((tool) => tool.name);
    assert.ok(names.includes("legacy.test_simple_text"), names.join(", "));
    assert.ok(names.some((name) => name.startsWith("small.")), names.join(", "));
    const asked = await v2.client.callTool({
      name: "legacy.test_input_required_result_elicitation",
      arguments: {},
    });
    assert.equal(asked.isError, undefined, JSON.stringify(asked));
    assert.deepEqual(v2.answered, ["elicitation/create"]);
    assert.match(JSON.stringify(asked.content), /Hello, name-value!/);
  } finally {
    await v2.close();
    await gw.close();
  }
});

Deno.test("two replicas: a retry reaching the replica holding its call completes; on the other it is refused with what to do", async () => {
  const kv = await openKvStore(":memory:");
  const yaml = (replica: string) => `replicaId: ${replica}\n${CONFIG}`;
  const a = await startGateway(yaml("a"), {}, { store: kv });
  const b = await startGateway(yaml("b"), {}, { store: kv });
  try {
    const answer = { user_name: { action: "accept", content: { name: "Alice" } } };
    // Routed by the person's Authorization header, as docs/deploy.md asks: both on one replica.
    for (const [first, retry, works] of [[a, a, true], [b, b, true], [a, b, false]] as const) {
      const asked = await call(first, 1, "test_input_required_result_elicitation");
      const state = asked.json.result!.requestState;
      const done = await call(retry, 2, "test_input_required_result_elicitation", {
        inputResponses: answer,
        requestState: state,
      });
      if (works) {
        assert.equal(done.json.result?.resultType, "complete", JSON.stringify(done.json));
      } else {
        assert.equal(done.json.error?.code, -32602);
        assert.match(done.json.error!.message, /reached another gateway replica/);
      }
    }
  } finally {
    await a.close();
    await b.close();
    kv.close();
  }
});

Deno.test("a 2026 call that takes input, its arguments nested 100,000 levels deep, is refused 400 -32600 (it was a 500)", async () => {
  const gw = await startGateway(CONFIG);
  try {
    let deep: unknown = "bottom";
    for (let level = 0; level < 100_000; level++) deep = [deep];
    const refused = await call(gw, 1, "test_input_required_result_elicitation", {
      arguments: { deep },
    });
    assert.equal(refused.status, 400, JSON.stringify(refused.json).slice(0, 300));
    assert.equal(refused.json.error?.code, -32600);
    assert.match(refused.json.error!.message, /more than 128 levels deep/);
    // The same call with its arguments as a client sends them is served.
    const first = await call(gw, 2, "test_input_required_result_elicitation");
    assert.equal(first.json.result?.resultType, "input_required", JSON.stringify(first.json));
  } finally {
    await gw.close();
  }
});
