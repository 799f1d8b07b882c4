/**
 * The official conformance suite (0.2.0-alpha.12) through the gateway, held to what the same
 * fixtures score when reached directly (tests/fixtures/conformance_baselines.ts), in each
 * direction: `--requirements 2026-07-28` in front of the 2025-only fixture and in front of the
 * 2026-only one, and `--requirements 2025-11-25` in front of the 2026-only fixture.
 */
import assert from "node:assert/strict";
import {
  LEGACY_EVERYTHING_STDIO,
  MODERN_EVERYTHING_STDIO,
  startGateway,
} from "./fixtures/gateway.ts";
import { SCORED_2025, SCORED_2026 } from "./fixtures/conformance_baselines.ts";
import { startModernFixture } from "./fixtures/modern_server.ts";
import { describeRun, passing, runConformance, showRun } from "./fixtures/conformance_run.ts";

/**
 * Scored 2026 scenarios that pass against the fixture directly but not through the gateway,
 * and why. `ignore-extra-params` sends `inputResponses` on a first call that has no
 * `requestState`: a 2025 backend cannot take answers to questions it has not asked yet, so the
 * gateway calls the tool and passes on its question (a warning, not a failure, in the suite).
 */
const NOT_THROUGH_2025_BACKEND = ["input-required-result-ignore-extra-params"];

Deno.test("2026-07-28 conformance through the gateway to a 2025-only backend matches the direct run", async () => {
  // The suite sends Origin: http://localhost:PORT; the gateway's own loopback names pass.
  const gw = await startGateway(`
baseUrl: "http://127.0.0.1:{{PORT}}"
limits: { requestTimeout: 20s }
servers:
  legacy:
    transport: stdio
    ${LEGACY_EVERYTHING_STDIO}
    public: true
`);
  try {
    const run = await runConformance(`${gw.url}/legacy/mcp`, "2026-07-28");
    showRun(`conformance 2026-07-28 through the gateway`, run);
    const problems = [...run.results].filter(([, r]) => r.problems.length)
      .map(([name, r]) => `${name}: ${r.problems.join("; ")}`).join("\n");
    const expected = SCORED_2026.filter((name) => !NOT_THROUGH_2025_BACKEND.includes(name));
    assert.deepEqual(
      passing(run, true),
      expected,
      `scored scenarios fail:\n${problems}\n${describeRun(run)}`,
    );
  } finally {
    await gw.close();
  }
});

for (const requirements of ["2026-07-28", "2025-11-25"] as const) {
  Deno.test(`${requirements} conformance through the gateway to a 2026-only backend matches the direct run`, async () => {
    const fixture = await startModernFixture();
    const gw = await startGateway(`
baseUrl: "http://127.0.0.1:{{PORT}}"
limits: { requestTimeout: 20s }
servers:
  modern:
    transport: streamable-http
    url: ${fixture.url}
    public: true
`);
    try {
      const run = await runConformance(`${gw.url}/modern/mcp`, requirements);
      showRun(`conformance ${requirements} through the gateway to 2026`, run);
      const problems = [...run.results].filter(([, r]) => r.problems.length)
        .map(([name, r]) => `${name}: ${r.problems.join("; ")}`).join("\n");
      const expected = requirements === "2025-11-25" ? SCORED_2025 : SCORED_2026;
      assert.deepEqual(
        passing(run, true),
        expected,
        `scored scenarios fail:\n${problems}\n${describeRun(run)}`,
      );
    } finally {
      await gw.close();
      await fixture.close();
    }
  });
}

Deno.test("2026-07-28 conformance through the gateway to a 2026-only stdio backend matches the direct run", async () => {
  // Each request passes to the person's own child as the client sent it (stateless_passage.ts).
  const gw = await startGateway(`
baseUrl: "http://127.0.0.1:{{PORT}}"
limits: { requestTimeout: 20s }
servers:
  modern:
    transport: stdio
    ${MODERN_EVERYTHING_STDIO}
    public: true
`);
  try {
    const run = await runConformance(`${gw.url}/modern/mcp`, "2026-07-28");
    showRun(`conformance 2026-07-28 through the gateway to 2026 over stdio`, run);
    const problems = [...run.results].filter(([, r]) => r.problems.length)
      .map(([name, r]) => `${name}: ${r.problems.join("; ")}`).join("\n");
    assert.deepEqual(
      passing(run, true),
      SCORED_2026,
      `scored scenarios fail:\n${problems}\n${describeRun(run)}`,
    );
  } finally {
    await gw.close();
  }
});
