import assert from "node:assert/strict";
import type { Json } from "./json_shape.ts";
import {
  discoverAtGateway,
  discoverBeforeCredential,
  discoverFromInitialize,
  initializeFromDiscover,
  pickModernVersion,
  serverCapabilitiesFor2025,
  serverCapabilitiesFor2026,
} from "./discover.ts";

const INFO = "io.modelcontextprotocol/serverInfo";
const SERVER_INFO = { name: "files", version: "1.2.0" };
const CAPABILITIES = {
  tools: { listChanged: true },
  prompts: {},
  resources: { subscribe: true, listChanged: true },
  logging: {},
  completions: {},
  experimental: { "x-feature": {} },
};
const CACHE = { ttlMs: 0, cacheScope: "private" };
/** Every revision the gateway's URL serves: 2026-07-28 on its own, the rest in sessions. */
const SERVED = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07"];

/** Each row: a 2025 backend's InitializeResult beside the discover answer a 2026 client gets. */
const DISCOVER: { name: string; initialize: Json; discover: Json }[] = [
  {
    name: "carries capabilities, instructions and serverInfo, with the gateway's modern versions",
    initialize: {
      protocolVersion: "2025-11-25",
      capabilities: CAPABILITIES,
      serverInfo: SERVER_INFO,
      instructions: "Read files.",
    },
    discover: {
      resultType: "complete",
      supportedVersions: SERVED,
      capabilities: CAPABILITIES,
      instructions: "Read files.",
      ...CACHE,
      _meta: { [INFO]: SERVER_INFO },
    },
  },
  {
    name: "leaves out the 2025 tasks capability and keeps other _meta keys",
    initialize: {
      protocolVersion: "2025-06-18",
      capabilities: { tools: {}, tasks: { list: {}, requests: { tools: { call: {} } } } },
      serverInfo: SERVER_INFO,
      _meta: { trace: "t1" },
    },
    discover: {
      resultType: "complete",
      supportedVersions: SERVED,
      capabilities: { tools: {} },
      ...CACHE,
      _meta: { trace: "t1", [INFO]: SERVER_INFO },
    },
  },
  {
    name: "gives empty capabilities and no _meta for a result missing both",
    initialize: { protocolVersion: "2025-11-25" },
    discover: {
      resultType: "complete",
      supportedVersions: SERVED,
      capabilities: {},
      ...CACHE,
    },
  },
];

for (const row of DISCOVER) {
  Deno.test(`discoverFromInitialize() ${row.name}`, () => {
    assert.deepEqual(discoverFromInitialize(row.initialize), row.discover);
  });
}

const FALLBACK = { name: "gatehouse/files", version: "0.1.0" };

/** Each row: what a 2025 client asked, the 2026 backend's discover, the InitializeResult. */
const INITIALIZE: { name: string; requested: unknown; discover: Json; initialize: Json }[] = [
  {
    name: "answers the version asked for with serverInfo out of _meta",
    requested: "2025-06-18",
    discover: {
      resultType: "complete",
      supportedVersions: ["2026-07-28"],
      capabilities: CAPABILITIES,
      instructions: "Read files.",
      ...CACHE,
      _meta: { [INFO]: SERVER_INFO },
    },
    initialize: {
      protocolVersion: "2025-06-18",
      capabilities: CAPABILITIES,
      serverInfo: SERVER_INFO,
      instructions: "Read files.",
    },
  },
  {
    name: "answers the newest session version for one it does not speak, and a fallback name",
    requested: "2026-07-28",
    discover: {
      resultType: "complete",
      supportedVersions: ["2026-07-28"],
      capabilities: { tools: {} },
      ...CACHE,
    },
    initialize: {
      protocolVersion: "2025-11-25",
      capabilities: { tools: {} },
      serverInfo: FALLBACK,
    },
  },
  {
    name: "leaves out the tasks extension, keeps other extensions and _meta keys",
    requested: "2025-11-25",
    discover: {
      resultType: "complete",
      supportedVersions: ["2026-07-28"],
      capabilities: {
        tools: {},
        extensions: { "io.modelcontextprotocol/tasks": {}, "com.example/ui": { v: 1 } },
      },
      ...CACHE,
      _meta: { [INFO]: SERVER_INFO, trace: "t1" },
    },
    initialize: {
      protocolVersion: "2025-11-25",
      capabilities: { tools: {}, extensions: { "com.example/ui": { v: 1 } } },
      serverInfo: SERVER_INFO,
      _meta: { trace: "t1" },
    },
  },
];

for (const row of INITIALIZE) {
  Deno.test(`initializeFromDiscover() ${row.name}`, () => {
    assert.deepEqual(initializeFromDiscover(row.discover, row.requested, FALLBACK), row.initialize);
  });
}

Deno.test("discoverAtGateway() names the revisions the gateway serves and keeps the backend's rest", () => {
  const own = { resultType: "complete", supportedVersions: ["2026-07-28"], capabilities: {} };
  assert.deepEqual(discoverAtGateway(own), { ...own, supportedVersions: SERVED });
  assert.equal(discoverAtGateway("not a result"), "not a result");
});

Deno.test("serverCapabilitiesFor2025() drops an extensions object left empty", () => {
  assert.deepEqual(
    serverCapabilitiesFor2025({ prompts: {}, extensions: { "io.modelcontextprotocol/tasks": {} } }),
    { prompts: {} },
  );
  assert.deepEqual(serverCapabilitiesFor2025(undefined), {});
  assert.deepEqual(serverCapabilitiesFor2026("nonsense"), {});
});

Deno.test("pickModernVersion() picks a shared modern version, or none", () => {
  assert.equal(pickModernVersion(["2027-01-01", "2026-07-28"]), "2026-07-28");
  assert.equal(pickModernVersion(["2027-01-01"]), undefined);
  assert.equal(pickModernVersion(undefined), undefined);
});

Deno.test("discoverBeforeCredential() offers tools, says where to connect, and lets nothing be cached", () => {
  assert.deepEqual(discoverBeforeCredential("Tracker needs your own credential: connect it at X"), {
    resultType: "complete",
    supportedVersions: SERVED,
    capabilities: { tools: {} },
    instructions: "Tracker needs your own credential: connect it at X",
    ttlMs: 0,
    cacheScope: "private",
  });
});
