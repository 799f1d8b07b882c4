/**
 * Traces end to end (docs/observability.md): the gateway process, with Deno's OpenTelemetry
 * switched on by OTEL_DENO=true, exports its spans over OTLP/HTTP (JSON) to a receiver run
 * here. A tools/call carrying the client's `traceparent` becomes one trace: the client's span,
 * Deno's HTTP server span, the gateway's MCP span, its backend round trip, and the backend,
 * which gets the round trip as its parent (in `_meta`, and over HTTP in one header); through a
 * Streamable HTTP session, a 2026-07-28 request without one and legacy SSE, to stdio and HTTP
 * backends; and /token's span. With tracing off (the default) nothing reaches a backend that
 * the client did not send.
 */
import assert from "node:assert/strict";
import { TRACING } from "../src/observability/tracing.ts";
import { connectClient } from "./fixtures/client.ts";
import { startGateway } from "./fixtures/gateway.ts";
import { startGatewayProcess } from "./fixtures/gateway_process.ts";
import {
  type OtlpReceiver,
  type ReceivedSpan,
  startOtlpReceiver,
} from "./fixtures/otlp_receiver.ts";
import { mcpHeaders, openSession, post } from "./fixtures/raw.ts";
import { startTraceBackend } from "./fixtures/trace_backend.ts";
import { waitUntil } from "./fixtures/waits.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const TOKEN = "tracing-test-token-0123456789";
const ARGUMENT = "argument-never-in-a-span";
const AUTH = { authorization: `Bearer ${TOKEN}` };
const SERVER_KIND = 2;
const CLIENT_KIND = 3;

function servers(backendUrl: string) {
  return `servers:
  local:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts"]
    serviceAuths: [{ type: bearer, tokens: ["${TOKEN}"] }]
  remote:
    transport: streamable-http
    url: ${backendUrl}
    protocol: 2025-11-25
    serviceAuths: [{ type: bearer, tokens: ["${TOKEN}"] }]
`;
}

/** A fresh trace id and a client span id in it, as a client's tracer makes them. */
function clientTrace() {
  const hex = (bytes: number) =>
    [...crypto.getRandomValues(new Uint8Array(bytes))]
      .map((b) => b.toString(16).padStart(2, "0")).join("");
  const traceId = hex(16);
  const spanId = hex(8);
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

/** Calls `meta` in a new session; returns the `_meta` the backend answered it was sent. */
async function callMeta(url: string, headers: Record<string, string>) {
  const session = await openSession(url, AUTH);
  const answer = await post(
    url,
    {
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "meta", arguments: { secret: ARGUMENT } },
    },
    mcpHeaders({ ...AUTH, "mcp-session-id": session, ...headers }),
  );
  const result = (answer.json as { result: { content: { text: string }[] } }).result;
  return { session, seen: JSON.parse(result.content[0].text) as Record<string, unknown> };
}

/** The trace's server span from Deno, MCP span and backend span, once all have arrived. */
async function spansOf(receiver: OtlpReceiver, traceId: string) {
  const find = () => {
    const inTrace = receiver.spans.filter((span) => span.traceId === traceId);
    return {
      http: inTrace.find((span) => span.scope === "deno" && span.kind === SERVER_KIND),
      call: inTrace.find((span) => span.name === "tools/call meta" && span.kind === SERVER_KIND),
      backend: inTrace.find((span) => span.name === "tools/call meta" && span.kind === CLIENT_KIND),
    };
  };
  await waitUntil(`the spans of trace ${traceId} at the OTLP receiver`, () => {
    const { call, backend } = find();
    return call !== undefined && backend !== undefined;
  });
  return find() as Record<"http" | "call" | "backend", ReceivedSpan | undefined>;
}

Deno.test("with OTEL_DENO=true a tools/call is one trace from the client's traceparent to the backend, stdio and HTTP", async () => {
  const receiver = await startOtlpReceiver();
  const backend = await startTraceBackend();
  const gw = await startGatewayProcess(
    `listen: 127.0.0.1:{{PORT}}
baseUrl: http://127.0.0.1:{{PORT}}
storage: ":memory:"
secret: tracing-test-master-secret-0123456789abcdef
oauth:
  idp: { provider: oidc, issuer: "http://127.0.0.1:9", clientId: gw, clientSecret: idp-secret-0123456789 }
  allow: { domains: [example.com] }
${servers(backend.url)}`,
    {
      OTEL_DENO: "true",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_BSP_SCHEDULE_DELAY: "50",
      OTEL_SERVICE_NAME: "gatehouse",
    },
  );
  try {
    for (const [server, transport] of [["local", "stdio"], ["remote", "streamable-http"]]) {
      const client = clientTrace();
      const { session, seen } = await callMeta(`${gw.url}/${server}/mcp`, {
        traceparent: client.traceparent,
      });
      const { http, call, backend: roundTrip } = await spansOf(receiver, client.traceId);

      // Client → Deno's HTTP server span → the MCP span → the backend round trip.
      assert.ok(http, `${server}: Deno's server span is in the client's trace`);
      assert.equal(http.parentSpanId, client.spanId);
      assert.equal(http.name, "POST /{server}/mcp");
      assert.equal(http.attributes["http.route"], "/{server}/mcp");
      // The client as the front saw it (behind trustedProxies, the client a proxy named).
      assert.equal(http.attributes["client.address"], "127.0.0.1");
      assert.equal(
        call!.parentSpanId,
        http.spanId,
        `${server}: the MCP span is the HTTP span's child`,
      );
      assert.equal(roundTrip!.parentSpanId, call!.spanId);
      assert.equal(call!.service, "gatehouse");
      assert.deepEqual(
        {
          method: call!.attributes["mcp.method.name"],
          tool: call!.attributes["gen_ai.tool.name"],
          server: call!.attributes["gatehouse.server"],
          session: call!.attributes["mcp.session.id"],
          requestId: call!.attributes["jsonrpc.request.id"],
          outcome: call!.attributes["gatehouse.outcome"],
        },
        { method: "tools/call", tool: "meta", server, session, requestId: "7", outcome: "ok" },
      );
      // The person as the audit trail names them: a service token by its fingerprint.
      assert.match(String(call!.attributes["enduser.id"]), /^token:[0-9a-f]{12}$/);
      assert.equal(call!.status.code, 0);
      assert.equal(roundTrip!.attributes["gatehouse.backend.transport"], transport);
      assert.equal(
        roundTrip!.attributes["network.transport"],
        transport === "stdio" ? "pipe" : "tcp",
      );

      // The backend's parent is the round trip, in _meta on every transport…
      const expected = `00-${client.traceId}-${roundTrip!.spanId}-01`;
      assert.equal(seen.traceparent, expected);
      // …and over HTTP in exactly one traceparent header, the same.
      if (transport !== "stdio") {
        const calls = backend.seen.filter((request) => request.method === "tools/call");
        assert.deepEqual(calls.map((request) => request.traceparent), [expected]);
        assert.equal(roundTrip!.attributes["server.address"], "127.0.0.1");
      }
    }

    // A call the backend refuses: both spans are errors, named by the JSON-RPC code.
    const failing = clientTrace();
    const session = await openSession(`${gw.url}/remote/mcp`, AUTH);
    await post(
      `${gw.url}/remote/mcp`,
      { jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "fail" } },
      mcpHeaders({ ...AUTH, "mcp-session-id": session, traceparent: failing.traceparent }),
    );
    await waitUntil(
      "the spans of the refused call",
      () =>
        receiver.spans.filter((span) =>
          span.traceId === failing.traceId && span.name === "tools/call fail"
        ).length === 2,
    );
    for (const span of receiver.spans.filter((span) => span.traceId === failing.traceId)) {
      if (span.scope === "deno") continue;
      assert.equal(span.status.code, 2, `${span.kind}: status ERROR`);
      assert.equal(span.attributes["error.type"], "-32602");
      if (span.kind === SERVER_KIND) {
        assert.equal(span.attributes["gatehouse.outcome"], "error");
        assert.equal(span.attributes["rpc.response.status_code"], "-32602");
      }
    }

    // Legacy SSE's message POST, with the trace context in _meta as an SDK client sends it.
    const legacy = clientTrace();
    const sse = await connectClient(gw.url, "local", "sse", TOKEN);
    try {
      await sse.callTool({
        name: "meta",
        arguments: {},
        _meta: { traceparent: legacy.traceparent },
      });
    } finally {
      await sse.close();
    }
    const viaSse = await spansOf(receiver, legacy.traceId);
    assert.equal(
      viaSse.call!.parentSpanId,
      legacy.spanId,
      "legacy SSE: the client's _meta is the parent",
    );
    assert.equal(viaSse.backend!.parentSpanId, viaSse.call!.spanId);

    // A 2026-07-28 client without a session puts its trace context in _meta (SEP-414): that is
    // the MCP span's parent, and the HTTP span it came in is linked.
    const client = clientTrace();
    const version = "2026-07-28";
    const answer = await post(
      `${gw.url}/local/mcp`,
      {
        jsonrpc: "2.0",
        id: "s-1",
        method: "tools/call",
        params: {
          name: "meta",
          arguments: {},
          _meta: {
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": {},
            traceparent: client.traceparent,
          },
        },
      },
      mcpHeaders({
        ...AUTH,
        "mcp-protocol-version": version,
        "mcp-method": "tools/call",
        "mcp-name": "meta",
      }),
    );
    assert.equal(answer.status, 200, answer.text);
    const stateless = await spansOf(receiver, client.traceId);
    assert.equal(stateless.call!.parentSpanId, client.spanId);
    assert.equal(stateless.backend!.parentSpanId, stateless.call!.spanId);
    assert.equal(stateless.call!.links.length, 1, "the HTTP span the request came in is linked");

    // The token endpoint: Deno's server span, named after the route, says why it refused.
    const code = "tracing-test-authorization-code";
    const refused = await fetch(`${gw.url}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code,
        client_id: "no-such-client",
        code_verifier: "v".repeat(43),
        redirect_uri: "http://127.0.0.1/cb",
      }),
    });
    await refused.body?.cancel();
    assert.ok(refused.status === 400 || refused.status === 401, String(refused.status));
    await waitUntil(
      "the /token span",
      () => receiver.spans.some((span) => span.name === "POST /token"),
    );
    const token = receiver.spans.find((span) => span.name === "POST /token")!;
    assert.equal(token.attributes["http.route"], "/token");
    assert.match(String(token.attributes["gatehouse.oauth.error"]), /^invalid_(client|grant)$/);
    assert.ok(!JSON.stringify(receiver.spans).includes(code), "a span carries the code");

    // Nothing secret in any span the gateway sent: no token, no argument.
    const exported = JSON.stringify(receiver.spans);
    assert.ok(!exported.includes(TOKEN), "a span carries the bearer token");
    assert.ok(!exported.includes(ARGUMENT), "a span carries a tool argument");
  } finally {
    await gw.close();
    await backend.close();
    await receiver.close();
  }
});

Deno.test({
  name: "with tracing off a backend gets no trace context the client did not send",
  ignore: TRACING,
  fn: async () => {
    const backend = await startTraceBackend();
    const gw = await startGateway(servers(backend.url));
    try {
      const bare = await callMeta(`${gw.url}/local/mcp`, {});
      assert.equal("traceparent" in bare.seen, false, JSON.stringify(bare.seen));
      // A client's own trace context in _meta passes as it is.
      const session = await openSession(`${gw.url}/local/mcp`, AUTH);
      const own = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
      const answer = await post(
        `${gw.url}/local/mcp`,
        {
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "meta", _meta: { traceparent: own, tracestate: "rojo=1" } },
        },
        mcpHeaders({ ...AUTH, "mcp-session-id": session }),
      );
      const text = (answer.json as { result: { content: { text: string }[] } }).result.content[0]
        .text;
      assert.deepEqual(JSON.parse(text), { traceparent: own, tracestate: "rojo=1" });

      const remote = await callMeta(`${gw.url}/remote/mcp`, {
        traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      });
      assert.equal("traceparent" in remote.seen, false);
      assert.deepEqual(backend.seen.map((request) => request.traceparent).filter(Boolean), []);
    } finally {
      await gw.close();
      await backend.close();
    }
  },
});
