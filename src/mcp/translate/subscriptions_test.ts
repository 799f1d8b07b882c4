import assert from "node:assert/strict";
import type { RpcNotification } from "../protocol/jsonrpc.ts";
import {
  acknowledgement,
  honouredFilter,
  listenEndResponse,
  listenFilterForSession,
  notificationFor2025,
  notificationForListen,
  parseListenFilter,
  type SubscriptionFilter,
} from "./subscriptions.ts";

const SUB = "io.modelcontextprotocol/subscriptionId";
const ALL_CAPS = {
  tools: { listChanged: true },
  prompts: { listChanged: true },
  resources: { listChanged: true, subscribe: true },
};
const note = (method: string, params?: Record<string, unknown>): RpcNotification =>
  params ? { jsonrpc: "2.0", method, params } : { jsonrpc: "2.0", method };

/**
 * Each row: a 2025 backend's notification beside what a listen (id 1) with `filter` gets, or
 * undefined when the filter keeps it off the stream.
 */
const ROWS: {
  name: string;
  filter: SubscriptionFilter;
  n2025: RpcNotification;
  n2026?: RpcNotification;
}[] = [
  {
    name: "passes tools/list_changed to a listen that asked for it",
    filter: { toolsListChanged: true },
    n2025: note("notifications/tools/list_changed"),
    n2026: note("notifications/tools/list_changed", { _meta: { [SUB]: 1 } }),
  },
  {
    name: "keeps tools/list_changed off a prompts-only listen",
    filter: { promptsListChanged: true },
    n2025: note("notifications/tools/list_changed"),
  },
  {
    name: "passes prompts/list_changed, keeping its own _meta",
    filter: { promptsListChanged: true },
    n2025: note("notifications/prompts/list_changed", { _meta: { trace: "t" } }),
    n2026: note("notifications/prompts/list_changed", { _meta: { trace: "t", [SUB]: 1 } }),
  },
  {
    name: "passes resources/list_changed to a listen that asked for it",
    filter: { resourcesListChanged: true },
    n2025: note("notifications/resources/list_changed"),
    n2026: note("notifications/resources/list_changed", { _meta: { [SUB]: 1 } }),
  },
  {
    name: "passes resources/updated for a subscribed URI",
    filter: { resourceSubscriptions: ["file:///a", "file:///b"] },
    n2025: note("notifications/resources/updated", { uri: "file:///b" }),
    n2026: note("notifications/resources/updated", { uri: "file:///b", _meta: { [SUB]: 1 } }),
  },
  {
    name: "keeps resources/updated for another URI off the stream",
    filter: { resourceSubscriptions: ["file:///a"], resourcesListChanged: true },
    n2025: note("notifications/resources/updated", { uri: "file:///c" }),
  },
  {
    name: "keeps progress and logs off the stream",
    filter: { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true },
    n2025: note("notifications/message", { level: "info", data: "x" }),
  },
];

for (const row of ROWS) {
  Deno.test(`notificationForListen() ${row.name}`, () => {
    assert.deepEqual(notificationForListen(row.n2025, 1, row.filter), row.n2026);
  });
}

Deno.test("notificationFor2025() takes the listen's tag off a 2026 notification", () => {
  for (const row of ROWS.filter((row) => row.n2026)) {
    assert.deepEqual(notificationFor2025(row.n2026!), row.n2025);
  }
  const untagged = note("notifications/progress", { progressToken: 1, progress: 5 });
  assert.equal(notificationFor2025(untagged), untagged);
});

Deno.test("parseListenFilter() reads a filter and says what is wrong with a bad one", () => {
  const filter = { toolsListChanged: true, resourceSubscriptions: ["file:///a"], extra: 1 };
  assert.deepEqual(parseListenFilter({ notifications: filter, _meta: {} }), {
    toolsListChanged: true,
    resourceSubscriptions: ["file:///a"],
  });
  assert.deepEqual(parseListenFilter({ notifications: {} }), {});
  assert.equal(
    parseListenFilter({}),
    "params.notifications must be an object (a subscription filter)",
  );
  assert.equal(
    parseListenFilter({ notifications: { promptsListChanged: "yes" } }),
    "params.notifications.promptsListChanged must be a boolean",
  );
  assert.equal(
    parseListenFilter({ notifications: { resourceSubscriptions: "file:///a" } }),
    "params.notifications.resourceSubscriptions must be a list of URIs",
  );
});

/** Each row: what a listen asked, the backend's 2025 capabilities, the subset honoured. */
const HONOURED: {
  name: string;
  asked: SubscriptionFilter;
  caps: Record<string, unknown>;
  honoured: SubscriptionFilter;
}[] = [
  {
    name: "everything from a backend that declares everything",
    asked: { toolsListChanged: true, promptsListChanged: true, resourceSubscriptions: ["u", "u"] },
    caps: ALL_CAPS,
    honoured: { toolsListChanged: true, promptsListChanged: true, resourceSubscriptions: ["u"] },
  },
  {
    name: "only the tools of a tools-only backend",
    asked: { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true },
    caps: { tools: { listChanged: true }, prompts: {} },
    honoured: { toolsListChanged: true },
  },
  {
    name: "no resource updates without resources.subscribe, and no false flags",
    asked: { resourceSubscriptions: ["u"], resourcesListChanged: true, toolsListChanged: false },
    caps: { resources: { listChanged: true }, tools: { listChanged: true } },
    honoured: { resourcesListChanged: true },
  },
];

for (const row of HONOURED) {
  Deno.test(`honouredFilter() honours ${row.name}`, () => {
    assert.deepEqual(honouredFilter(row.asked, row.caps), row.honoured);
  });
}

Deno.test("acknowledgement() opens the stream with the honoured filter and the listen's id", () => {
  assert.deepEqual(acknowledgement("L1", { toolsListChanged: true }), {
    jsonrpc: "2.0",
    method: "notifications/subscriptions/acknowledged",
    params: { notifications: { toolsListChanged: true }, _meta: { [SUB]: "L1" } },
  });
});

Deno.test("listenEndResponse() ends a listen with a complete result naming it", () => {
  assert.deepEqual(listenEndResponse(4), {
    jsonrpc: "2.0",
    id: 4,
    result: { resultType: "complete", _meta: { [SUB]: 4 } },
  });
});

Deno.test("listenFilterForSession() asks a 2026 backend for what a 2025 session gets unasked", () => {
  assert.deepEqual(listenFilterForSession(ALL_CAPS, ["file:///a"]), {
    toolsListChanged: true,
    promptsListChanged: true,
    resourcesListChanged: true,
    resourceSubscriptions: ["file:///a"],
  });
  assert.deepEqual(listenFilterForSession({ prompts: { listChanged: true }, resources: {} }, []), {
    promptsListChanged: true,
  });
});
