import assert from "node:assert/strict";
import { initializeParamsProblem } from "./parse.ts";

const GOOD = {
  protocolVersion: "2025-11-25",
  capabilities: {},
  clientInfo: { name: "client", version: "1.0.0" },
};

Deno.test("initializeParamsProblem() accepts what a session needs, unknown fields too", () => {
  assert.equal(initializeParamsProblem(GOOD), undefined);
  assert.equal(initializeParamsProblem({ ...GOOD, _meta: {}, extra: 1 }), undefined);
});

Deno.test("initializeParamsProblem() names the first missing or mistyped field", () => {
  const cases: [unknown, string][] = [
    [
      undefined,
      "initialize needs params: an object with protocolVersion, capabilities and clientInfo",
    ],
    [
      [GOOD],
      "initialize needs params: an object with protocolVersion, capabilities and clientInfo",
    ],
    [
      { ...GOOD, protocolVersion: undefined },
      'initialize needs params.protocolVersion (a string such as "2025-11-25")',
    ],
    [
      { ...GOOD, protocolVersion: 20251125 },
      'initialize needs params.protocolVersion (a string such as "2025-11-25")',
    ],
    [
      { ...GOOD, capabilities: null },
      "initialize needs params.capabilities (an object, {} when the client offers none)",
    ],
    [
      { ...GOOD, capabilities: [] },
      "initialize needs params.capabilities (an object, {} when the client offers none)",
    ],
    [
      { ...GOOD, clientInfo: "client" },
      "initialize needs params.clientInfo (an object with the client's name and version)",
    ],
    [
      { ...GOOD, clientInfo: { version: "1" } },
      "initialize needs params.clientInfo.name (a string naming the client)",
    ],
    [
      { ...GOOD, clientInfo: { name: "client", version: 1 } },
      'initialize needs params.clientInfo.version (a string such as "1.0.0")',
    ],
  ];
  for (const [params, problem] of cases) {
    assert.equal(initializeParamsProblem(params), problem, JSON.stringify(params));
  }
});
