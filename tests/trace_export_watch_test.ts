/**
 * Traces switched on (OTEL_DENO=true) towards an endpoint nobody serves: Deno drops the spans
 * without a word, so the gateway says so in its log, once, naming the endpoint, and then no
 * more until the reminder interval (src/observability/export_watch_test.ts holds the rest).
 */
import assert from "node:assert/strict";
import { startGatewayProcess } from "./fixtures/gateway_process.ts";
import { refusedPort } from "./fixtures/ports.ts";
import { sleep, waitUntil } from "./fixtures/waits.ts";
import { DENO_DIR_YAML } from "./fixtures/deno_dir.ts";

const ROOT = new URL("../", import.meta.url).pathname;

Deno.test("with OTEL_DENO=true and an unreachable OTLP endpoint the log says so once, naming it", async () => {
  const port = await refusedPort();
  const gw = await startGatewayProcess(
    `listen: 127.0.0.1:{{PORT}}
storage: ":memory:"
servers:
  local:
    transport: stdio
    command: deno
    env: { ${DENO_DIR_YAML} }
    args: [run, "${ROOT}tests/fixtures/minimal_server.ts"]
    serviceAuths: [{ type: bearer, tokens: [trace-watch-token-0123456789] }]
`,
    {
      OTEL_DENO: "true",
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_BSP_SCHEDULE_DELAY: "50",
    },
  );
  try {
    const warnings = () =>
      gw.logs().split("\n").filter((line) => line.includes("cannot reach the OTLP endpoint"))
        .map((line) => JSON.parse(line));
    await waitUntil("the warning about the OTLP endpoint", () => warnings().length > 0);
    // Requests make spans, which Deno fails to export meanwhile: still one line.
    for (let i = 0; i < 5; i++) await (await fetch(`${gw.url}/health`)).body?.cancel();
    await sleep(300);
    const [warning, ...more] = warnings();
    assert.deepEqual(more, []);
    assert.equal(warning.level, "warn");
    assert.equal(warning.endpoint, `http://127.0.0.1:${port}/v1/traces`);
    assert.match(warning.error, /ConnectionRefused/);
    assert.match(warning.hint, /OTEL_EXPORTER_OTLP_ENDPOINT/);
  } finally {
    await gw.close();
  }
});
