/**
 * Prometheus metrics: behind a bearer token on the main listener, or on a listener of their
 * own; requests, calls, sessions, backend processes and refusals as an operator reads them.
 */
import assert from "node:assert/strict";
import { connectClient } from "./fixtures/client.ts";
import { FIXTURE_STDIO, startGateway } from "./fixtures/gateway.ts";
import { startGatewayProcess } from "./fixtures/gateway_process.ts";
import { INIT, post } from "./fixtures/raw.ts";

const TOKEN = "metrics-test-bearer-0123456789";
const METRICS_TOKEN = "metrics-scrape-token-0123456789";
const SERVERS = `servers:
  tools:
    transport: stdio
    ${FIXTURE_STDIO}
    serviceAuths: [{ type: bearer, tokens: ["${TOKEN}"] }]
`;

/** The value of one series in an exposition, by its exact name and labels. */
function value(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

Deno.test("GET /metrics needs metrics.token and reports requests, calls, sessions, processes and refusals", async () => {
  const gw = await startGateway(`metrics: { token: ${METRICS_TOKEN} }\n${SERVERS}`);
  try {
    const client = await connectClient(gw.url, "tools", "streamable", TOKEN);
    await client.callTool({ name: "test_simple_text", arguments: {} });
    assert.equal((await post(`${gw.url}/tools/mcp`, INIT)).status, 401);

    const refused = await fetch(`${gw.url}/metrics`);
    assert.equal(refused.status, 401);
    await refused.body?.cancel();
    const wrong = await fetch(`${gw.url}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}x` },
    });
    assert.equal(wrong.status, 401);
    await wrong.body?.cancel();

    const response = await fetch(`${gw.url}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type")!, /^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    assert.ok(value(text, 'gatehouse_http_requests_total{kind="mcp",status="200"}')! >= 3);
    assert.equal(value(text, 'gatehouse_calls_total{server="tools",outcome="ok"}'), 1);
    assert.equal(value(text, 'gatehouse_call_duration_seconds_count{server="tools"}'), 1);
    assert.equal(
      value(text, 'gatehouse_call_duration_seconds_bucket{server="tools",le="+Inf"}'),
      1,
    );
    assert.equal(value(text, 'gatehouse_sessions{server="tools"}'), 1);
    assert.ok(value(text, "gatehouse_backend_processes")! >= 1);
    assert.equal(
      value(text, 'gatehouse_auth_refusals_total{server="tools",reason="unauthorized"}'),
      1,
    );
    assert.match(text, /# TYPE gatehouse_http_request_duration_seconds histogram/);
    await client.close();
  } finally {
    await gw.close();
  }
});

Deno.test("without metrics configured /metrics is 404; metrics.listen serves them on their own port", async () => {
  const plain = await startGateway(SERVERS);
  try {
    const response = await fetch(`${plain.url}/metrics`);
    assert.equal(response.status, 404);
    await response.body?.cancel();
  } finally {
    await plain.close();
  }

  const gw = await startGatewayProcess(`listen: 127.0.0.1:{{PORT}}
storage: ":memory:"
metrics: { listen: "127.0.0.1:{{METRICS_PORT}}" }
${SERVERS}`);
  try {
    const scraped = await fetch(`http://127.0.0.1:${gw.metricsPort}/metrics`);
    assert.equal(scraped.status, 200);
    assert.match(
      await scraped.text(),
      /gatehouse_http_requests_total\{kind="health",status="200"\}/,
    );
    const other = await fetch(`http://127.0.0.1:${gw.metricsPort}/tools/mcp`);
    assert.equal(other.status, 404);
    await other.body?.cancel();
    // The main listener does not serve them without a token.
    const main = await fetch(`${gw.url}/metrics`);
    assert.equal(main.status, 404);
    await main.body?.cancel();
  } finally {
    await gw.close();
  }
});
