import assert from "node:assert/strict";
import type { RpcNotification, RpcRequest } from "../protocol/jsonrpc.ts";
import {
  messageFor2025Backend,
  messageFor2026Backend,
  type SessionMeta,
  sessionMetaFromInitialize,
  withLogLevel,
} from "./request_meta.ts";

const VERSION = "io.modelcontextprotocol/protocolVersion";
const CAPS = "io.modelcontextprotocol/clientCapabilities";
const INFO = "io.modelcontextprotocol/clientInfo";
const LEVEL = "io.modelcontextprotocol/logLevel";
const CLIENT = { name: "inspector", version: "0.17.0" };

Deno.test("sessionMetaFromInitialize() keeps clientInfo and capabilities without tasks", () => {
  const params = {
    protocolVersion: "2025-11-25",
    capabilities: { sampling: {}, elicitation: { form: {} }, roots: {}, tasks: { list: {} } },
    clientInfo: CLIENT,
  };
  assert.deepEqual(sessionMetaFromInitialize(params, "2026-07-28"), {
    protocolVersion: "2026-07-28",
    clientCapabilities: { sampling: {}, elicitation: { form: {} }, roots: {} },
    clientInfo: CLIENT,
  });
  assert.deepEqual(sessionMetaFromInitialize(undefined, "2026-07-28"), {
    protocolVersion: "2026-07-28",
    clientCapabilities: {},
  });
});

Deno.test("withLogLevel() takes a level from logging/setLevel, refuses an unknown one", () => {
  const session: SessionMeta = { protocolVersion: "2026-07-28", clientCapabilities: {} };
  assert.deepEqual(withLogLevel(session, { level: "warning" }), {
    ...session,
    logLevel: "warning",
  });
  assert.equal(withLogLevel(session, { level: "loud" }), undefined);
  assert.equal(withLogLevel(session, undefined), undefined);
});

const SESSION: SessionMeta = {
  protocolVersion: "2026-07-28",
  clientCapabilities: { sampling: {} },
  clientInfo: CLIENT,
  logLevel: "info",
};
const ENVELOPE = {
  [VERSION]: "2026-07-28",
  [CAPS]: { sampling: {} },
  [INFO]: CLIENT,
  [LEVEL]: "info",
};

/** Each row: a message as the 2025 side has it, beside the same message on the 2026 side. */
const ROWS: {
  name: string;
  m2025: RpcRequest | RpcNotification;
  m2026: RpcRequest | RpcNotification;
}[] = [
  {
    name: "a request without params",
    m2025: { jsonrpc: "2.0", id: 1, method: "tools/list" },
    m2026: { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: ENVELOPE } },
  },
  {
    name: "a call whose _meta has a progressToken and a key of the client's",
    m2025: {
      jsonrpc: "2.0",
      id: "a",
      method: "tools/call",
      params: { name: "echo", arguments: { x: 1 }, _meta: { progressToken: 7, trace: "t" } },
    },
    m2026: {
      jsonrpc: "2.0",
      id: "a",
      method: "tools/call",
      params: {
        name: "echo",
        arguments: { x: 1 },
        _meta: { progressToken: 7, trace: "t", ...ENVELOPE },
      },
    },
  },
  {
    name: "a notification",
    m2025: { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 3 } },
    m2026: {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 3, _meta: ENVELOPE },
    },
  },
];

for (const row of ROWS) {
  Deno.test(`messageFor2026Backend() stamps the session's envelope on ${row.name}`, () => {
    assert.deepEqual(messageFor2026Backend(row.m2025, SESSION), row.m2026);
  });
  Deno.test(`messageFor2025Backend() takes the envelope off ${row.name}`, () => {
    assert.deepEqual(messageFor2025Backend(row.m2026), row.m2025);
  });
}

Deno.test("messageFor2026Backend() lets the envelope win over a client's envelope keys", () => {
  const request: RpcRequest = {
    jsonrpc: "2.0",
    id: 2,
    method: "prompts/list",
    params: { _meta: { [VERSION]: "1999-01-01", [CAPS]: { roots: {} } } },
  };
  const session: SessionMeta = { protocolVersion: "2026-07-28", clientCapabilities: {} };
  assert.deepEqual(messageFor2026Backend(request, session).params, {
    _meta: { [VERSION]: "2026-07-28", [CAPS]: {} },
  });
});

Deno.test("messageFor2025Backend() drops the retry params a 2025 backend has no use for", () => {
  const request: RpcRequest = {
    jsonrpc: "2.0",
    id: 9,
    method: "tools/call",
    params: {
      name: "ask",
      inputResponses: { user_name: { action: "accept" } },
      requestState: "v1.x.y",
      _meta: { [VERSION]: "2026-07-28", [CAPS]: {} },
    },
  };
  assert.deepEqual(messageFor2025Backend(request), {
    jsonrpc: "2.0",
    id: 9,
    method: "tools/call",
    params: { name: "ask" },
  });
});
