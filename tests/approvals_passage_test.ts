/**
 * A held call of a 2026-07-28 client to a backend that speaks 2026-07-28 itself (the request
 * passes through the person's link as the client sent it): the client hears of the approval
 * page as on every other lane, and its retry runs once approved. Real parts: the SDK v2 server
 * fixture over stdio (tests/fixtures/modern_server.ts), oidc-provider, the gateway, raw 2026
 * requests as a v2 client sends them.
 */
import assert from "node:assert/strict";
import { listenForGateway } from "./fixtures/gateway.ts";
import { MODERN_EVERYTHING_STDIO } from "./fixtures/gateway.ts";
import { startIdp } from "./fixtures/idp.ts";
import { idpSection, TEST_MASTER_SECRET } from "./fixtures/oauth_gateway.ts";
import { mcpHeaders, post } from "./fixtures/raw.ts";
import { openKvStore } from "../src/store/kv.ts";
import { ApprovalRecords } from "../src/mcp/approvals/approval_records.ts";
import { systemClock } from "../src/core/clock.ts";
import { within } from "./fixtures/waits.ts";

const ANN = "passage-test-token-ann-0123456789abcdef";
const VERSION = "2026-07-28";
const TOOL = "test_simple_text";

type Answer = {
  status: number;
  text: string;
  json: {
    result?: Record<string, unknown>;
    error?: { code: number; message: string; data?: Record<string, string> };
  };
};

function call(url: string, id: number, capabilities: Record<string, unknown>): Promise<Answer> {
  return post(
    `${url}/modern/mcp`,
    {
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: {
        name: TOOL,
        arguments: { n: 1 },
        _meta: {
          "io.modelcontextprotocol/protocolVersion": VERSION,
          "io.modelcontextprotocol/clientCapabilities": capabilities,
        },
      },
    },
    mcpHeaders({
      authorization: `Bearer ${ANN}`,
      "mcp-protocol-version": VERSION,
      "mcp-method": "tools/call",
      "mcp-name": TOOL,
    }),
  ) as Promise<Answer>;
}

Deno.test("a held call of a 2026 client to a 2026 backend names the page, with or without URL elicitation", async () => {
  const socket = await listenForGateway();
  const idp = await startIdp([`${socket.url}/oauth/callback`]);
  const store = await openKvStore(":memory:");
  const gw = await socket.start(
    `
baseUrl: ${socket.url}
secret: ${TEST_MASTER_SECRET}
limits: { requestTimeout: 20s }
servers:
  modern:
    transport: stdio
    ${MODERN_EVERYTHING_STDIO}
    serviceAuths: [{ type: bearer, tokens: ["\${ANN}"] }]
    approvals:
      - tools: [${TOOL}]
        by: caller
oauth:
${idpSection(idp)}
`,
    { IDP_SECRET: idp.clientSecret, ANN },
    { store },
  );
  try {
    const records = new ApprovalRecords(store, systemClock);
    // Whether the client declared URL elicitation or not, it is told the page: the request
    // passes through to the backend as it is, so the gateway has no input round of its own.
    for (const [id, capabilities] of [[1, { elicitation: { url: {} } }], [2, {}]] as const) {
      const held = await within("the held call's answer", call(gw.url, id, capabilities));
      assert.equal(held.json.error?.data?.reason, "approval_required", held.text);
      assert.equal(
        held.json.error?.data?.url,
        `${gw.url}/approvals/${held.json.error?.data?.approval}`,
      );
    }
    const waiting = (await records.all()).filter((r) => r.status === "pending");
    assert.equal(waiting.length, 1, "both asked for the one approval of the same call");
    await records.move(waiting[0].id, ["pending"], "approved", { decidedBy: "test" });
    const ran = await within("the approved retry", call(gw.url, 3, {}));
    assert.equal(ran.json.result?.resultType, "complete", ran.text);
    assert.equal((await records.get(waiting[0].id))?.status, "used");
  } finally {
    await gw.close();
    store.close();
    await idp.close();
  }
});
