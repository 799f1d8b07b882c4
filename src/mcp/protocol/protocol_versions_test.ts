import assert from "node:assert/strict";
import {
  ASSUMED_PROTOCOL_VERSION,
  expectsPrimingEvent,
  LATEST_SESSION_PROTOCOL_VERSION,
  negotiateProtocolVersion,
  protocolVersionHeaderProblem,
  SESSION_PROTOCOL_VERSIONS,
} from "./protocol_versions.ts";

Deno.test("negotiateProtocolVersion() keeps a revision the gateway speaks", () => {
  for (const version of SESSION_PROTOCOL_VERSIONS) {
    assert.equal(negotiateProtocolVersion(version), version);
  }
});

Deno.test("negotiateProtocolVersion() offers the newest for an unknown or missing revision", () => {
  for (const requested of ["1999-01-01", "", undefined, 20251125, null]) {
    assert.equal(negotiateProtocolVersion(requested), LATEST_SESSION_PROTOCOL_VERSION);
  }
});

Deno.test("protocolVersionHeaderProblem() lets a missing or known header pass", () => {
  assert.equal(protocolVersionHeaderProblem(null), undefined);
  assert.equal(protocolVersionHeaderProblem("2025-06-18"), undefined);
});

Deno.test("protocolVersionHeaderProblem() names the bad header, cut short, and what is spoken", () => {
  const problem = protocolVersionHeaderProblem("x".repeat(100));
  assert.equal(
    problem,
    `Bad Request: unsupported MCP-Protocol-Version "${"x".repeat(40)}"; ` +
      `this gateway speaks ${SESSION_PROTOCOL_VERSIONS.join(", ")}`,
  );
});

Deno.test("expectsPrimingEvent() is true from 2025-11-25 on and false before", () => {
  assert.equal(expectsPrimingEvent("2025-11-25"), true);
  assert.equal(expectsPrimingEvent("2025-06-18"), false);
  assert.equal(expectsPrimingEvent(ASSUMED_PROTOCOL_VERSION), false);
});
