/**
 * `Mcp-Param-*` headers (MCP 2026-07-28): a tool that marks an argument with `x-mcp-header`
 * has its client mirror it into a header, and a server must refuse (400, -32020) a call whose
 * header is missing, undecodable or different from the argument. The gateway serves 2026
 * clients in front of backends of either revision, so it holds the headers to the body itself,
 * with the marks of the backend's own tool list: here the real fixture servers over stdio
 * (`test_x_mcp_header`, whose `region` is mirrored into `Mcp-Param-Region`), by raw requests
 * as a client writes them, and by the official conformance suite's scenario.
 */
import assert from "node:assert/strict";
import {
  LEGACY_EVERYTHING_STDIO,
  MODERN_EVERYTHING_STDIO,
  startGateway,
  type TestGateway,
} from "./fixtures/gateway.ts";
import { mcpHeaders, post } from "./fixtures/raw.ts";
import { describeRun, passes, runConformance } from "./fixtures/conformance_run.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const TOKEN = "param-token-0123456789abcdef";
const MINIMAL = new URL("./fixtures/minimal_server.ts", import.meta.url).pathname;
const VERSION = "2026-07-28";
const CONFIG = `
baseUrl: "http://127.0.0.1:{{PORT}}"
limits: { requestTimeout: 20s }
servers:
  legacy:
    transport: stdio
    ${LEGACY_EVERYTHING_STDIO}
    serviceAuths: [{ type: bearer, tokens: ["${TOKEN}"] }]
  modern:
    transport: stdio
    ${MODERN_EVERYTHING_STDIO}
    serviceAuths: [{ type: bearer, tokens: ["${TOKEN}"] }]
  asking:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, "${MINIMAL}", "0", "plain", "ask-region"]
    serviceAuths: [{ type: bearer, tokens: ["${TOKEN}"] }]
`;

interface Answer {
  status: number;
  json: {
    result?: { content?: { text: string }[]; resultType?: string; requestState?: string };
    error?: { code: number; message: string };
  };
  text: string;
}

async function callTool(
  gw: TestGateway,
  server: string,
  args: Record<string, unknown>,
  params: Record<string, string>,
  name = "test_x_mcp_header",
  extra: Record<string, unknown> = {},
): Promise<Answer> {
  const body = {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: {
      name,
      arguments: args,
      ...extra,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
      },
    },
  };
  const headers = mcpHeaders({
    authorization: `Bearer ${TOKEN}`,
    "mcp-protocol-version": VERSION,
    "mcp-method": "tools/call",
    "mcp-name": name,
    ...params,
  });
  return await post(`${gw.url}/${server}/mcp`, body, headers) as Answer;
}

function served(answer: Answer, text: string, what: string) {
  assert.equal(answer.status, 200, `${what}: ${answer.text}`);
  assert.equal(answer.json.result?.content?.[0].text, text, what);
}

function refused(answer: Answer, pattern: RegExp, what: string) {
  assert.equal(answer.status, 400, `${what}: ${answer.text}`);
  assert.equal(answer.json.error?.code, -32020, what);
  assert.match(answer.json.error!.message, pattern, what);
}

for (const server of ["legacy", "modern"]) {
  Deno.test(`Mcp-Param-* headers are held to a 2026 call's arguments (${server} backend)`, async () => {
    const gw = await startGateway(CONFIG);
    try {
      const region = { region: "us-west1" };
      served(
        await callTool(gw, server, region, { "mcp-param-region": "us-west1" }),
        "region=us-west1",
        "matching",
      );
      // Base64 of the same value, and a header name in another case, are the same header.
      served(
        await callTool(gw, server, region, { "MCP-PARAM-REGION": "=?base64?dXMtd2VzdDE=?=" }),
        "region=us-west1",
        "base64",
      );
      refused(
        await callTool(gw, server, region, {}),
        /the Mcp-Param-Region header is missing; send Mcp-Param-Region: us-west1/,
        "missing",
      );
      refused(
        await callTool(gw, server, region, { "mcp-param-region": "eu-west1" }),
        /Mcp-Param-Region header "eu-west1" does not match the body's params\.arguments\.region "us-west1"/,
        "different",
      );
      refused(
        await callTool(gw, server, { region: "Hello" }, {
          "mcp-param-region": "=?base64?SGVsbG8?=",
        }),
        /is neither plain visible ASCII nor valid =\?base64\?…\?=/,
        "unpadded base64",
      );
      refused(
        await callTool(gw, server, {}, { "mcp-param-region": "us-west1" }),
        /mirrors no value: the body's params\.arguments\.region is absent/,
        "a header without its argument",
      );
      // No argument, no header: nothing to hold. An unmarked argument's header is not the
      // gateway's to judge, nor a header on a tool without marks.
      served(await callTool(gw, server, {}, {}), "region=<none>", "absent");
      served(
        await callTool(gw, server, { region: "a", level: 3 }, {
          "mcp-param-region": "a",
          "mcp-param-level": "4",
        }),
        "region=a",
        "unmarked argument",
      );
      const other = await callTool(gw, server, {}, { "mcp-param-region": "x" }, "test_simple_text");
      assert.equal(other.status, 200, other.text);
    } finally {
      await gw.close();
    }
  });
}

Deno.test("a 2026 retry that answers a backend's question is held to its Mcp-Param-* headers too", async () => {
  const gw = await startGateway(CONFIG);
  try {
    const region = { region: "us-west1" };
    const header = { "mcp-param-region": "us-west1" };
    const first = await callTool(gw, "asking", region, header, "ask_region");
    assert.equal(first.json.result?.resultType, "input_required", first.text);
    const answers = { inputResponses: {}, requestState: first.json.result!.requestState };
    const question = Object.keys(
      (first.json.result as { inputRequests: Record<string, unknown> }).inputRequests,
    )[0];
    answers.inputResponses = { [question]: { action: "accept", content: { ok: true } } };
    // The retry's header disagrees with its (unchanged) arguments: refused, nothing answered.
    refused(
      await callTool(
        gw,
        "asking",
        region,
        { "mcp-param-region": "eu-west1" },
        "ask_region",
        answers,
      ),
      /Mcp-Param-Region header "eu-west1" does not match/,
      "retry with another header",
    );
    // The same state is still good with the right header: the call was kept waiting.
    served(
      await callTool(gw, "asking", region, header, "ask_region", answers),
      'region=us-west1 answer={"action":"accept","content":{"ok":true}}',
      "retry",
    );
  } finally {
    await gw.close();
  }
});

Deno.test("the conformance suite's Mcp-Param-* server checks pass through the gateway, in front of a 2025 backend and a 2026 one", async () => {
  const gw = await startGateway(CONFIG.replaceAll(
    `serviceAuths: [{ type: bearer, tokens: ["${TOKEN}"] }]`,
    "public: true",
  ));
  try {
    for (const server of ["legacy", "modern"]) {
      const scenario = "http-custom-header-server-validation";
      const run = await runConformance(`${gw.url}/${server}/mcp`, VERSION, scenario);
      const result = run.results.get(scenario);
      assert.ok(passes(result), `${server}:\n${describeRun(run)}\n${result?.problems.join("\n")}`);
    }
  } finally {
    await gw.close();
  }
});
