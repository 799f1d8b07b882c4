import assert from "node:assert/strict";
import { testClock } from "../../tests/fixtures/clock.ts";
import { otlpTracesEndpoint, watchTraceExport } from "./export_watch.ts";
import { createLogger } from "./logger.ts";

function watched(outcomes: (string | undefined)[]) {
  const clock = testClock();
  clock.freeze();
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger("debug", (line) => lines.push(JSON.parse(line)), { clock });
  let next = 0;
  const watch = watchTraceExport({
    endpoint: "http://127.0.0.1:9/v1/traces",
    probe: () => Promise.resolve(outcomes[Math.min(next++, outcomes.length - 1)]),
    clock,
    logger,
    everyMs: 30_000,
    remindMs: 300_000,
  });
  const said = () => lines.map((line) => [line.level, line.msg]);
  return { clock, lines, watch, said };
}

Deno.test("watchTraceExport() says once that the endpoint is unreachable, then once per reminder interval, then that it is back", async () => {
  const down = "ConnectionRefused: Connection refused";
  const { clock, lines, watch, said } = watched([...Array(21).fill(down), undefined]);
  try {
    await watch.check();
    assert.deepEqual(said(), [[
      "warn",
      "traces cannot reach the OTLP endpoint: spans are dropped until it answers",
    ]]);
    assert.equal(lines[0].endpoint, "http://127.0.0.1:9/v1/traces");
    assert.equal(lines[0].error, down);
    // Nine more failed checks inside the first five minutes: nothing more.
    for (let i = 0; i < 9; i++) {
      clock.advance(30_000);
      await watch.check();
    }
    assert.equal(lines.length, 1);
    clock.advance(30_000);
    await watch.check();
    assert.deepEqual(said()[1], ["warn", "traces still cannot reach the OTLP endpoint"]);
    assert.equal(lines[1].failedChecks, 11);
    assert.equal(lines[1].unreachableForMs, 300_000);
    for (let i = 0; i < 10; i++) {
      clock.advance(30_000);
      await watch.check();
    }
    assert.equal(lines.length, 3, JSON.stringify(lines));
    clock.advance(30_000);
    await watch.check();
    assert.deepEqual(said()[3], ["info", "traces reach the OTLP endpoint again"]);
    clock.advance(30_000);
    await watch.check();
    assert.equal(lines.length, 4);
  } finally {
    watch.stop();
  }
});

Deno.test("watchTraceExport() says nothing while the endpoint answers", async () => {
  const { clock, watch, said } = watched([undefined]);
  try {
    for (let i = 0; i < 5; i++) {
      await watch.check();
      clock.advance(30_000);
    }
    assert.deepEqual(said(), []);
  } finally {
    watch.stop();
  }
});

Deno.test("otlpTracesEndpoint() follows the OTLP variables, as Deno does", () => {
  const env = (vars: Record<string, string>) => (name: string) => vars[name];
  assert.equal(otlpTracesEndpoint(env({})), "http://localhost:4318/v1/traces");
  assert.equal(
    otlpTracesEndpoint(env({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })),
    "http://collector:4318/v1/traces",
  );
  assert.equal(
    otlpTracesEndpoint(env({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example.com/in",
    })),
    "https://traces.example.com/in",
  );
});
