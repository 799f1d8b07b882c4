/**
 * `subscriptions/listen` ⇄ the notifications a 2025 session gets unasked. Toward a 2026
 * client: which of a 2025 backend's notifications a listen's filter lets through, tagged with
 * the listen's id; its acknowledgement, narrowed to what the backend can send; its graceful
 * end. Toward a 2025 client: the filter of the backend listen a session needs, and the tag
 * taken off again.
 */
import type { RequestId, RpcNotification, RpcResponse } from "../protocol/jsonrpc.ts";
import { isObject, type Json, metaOf, withMeta, without } from "./json_shape.ts";
import { MetaKey } from "../protocol/protocol_versions.ts";

/** What a listen asks for (`params.notifications`); every type is opt-in. */
export interface SubscriptionFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
}

const FLAGS = ["toolsListChanged", "promptsListChanged", "resourcesListChanged"] as const;
type Flag = typeof FLAGS[number];

/** Which flag lets each list change through, and the capability that says a server sends it. */
const LIST_CHANGED: Record<string, Flag> = {
  "notifications/tools/list_changed": "toolsListChanged",
  "notifications/prompts/list_changed": "promptsListChanged",
  "notifications/resources/list_changed": "resourcesListChanged",
};
const CAPABILITY: Record<Flag, string> = {
  toolsListChanged: "tools",
  promptsListChanged: "prompts",
  resourcesListChanged: "resources",
};

/** A listen's filter, or what is wrong with its params (the listen then gets -32602). */
export function parseListenFilter(params: unknown): SubscriptionFilter | string {
  const filter = isObject(params) ? params.notifications : undefined;
  if (!isObject(filter)) return "params.notifications must be an object (a subscription filter)";
  const parsed: SubscriptionFilter = {};
  for (const flag of FLAGS) {
    if (!(flag in filter)) continue;
    if (typeof filter[flag] !== "boolean") return `params.notifications.${flag} must be a boolean`;
    parsed[flag] = filter[flag] as boolean;
  }
  if ("resourceSubscriptions" in filter) {
    const uris = filter.resourceSubscriptions;
    if (!Array.isArray(uris) || !uris.every((uri) => typeof uri === "string")) {
      return "params.notifications.resourceSubscriptions must be a list of URIs";
    }
    parsed.resourceSubscriptions = [...uris];
  }
  return parsed;
}

/**
 * The part of `filter` a server with these (2025 `InitializeResult`) capabilities can honour:
 * a list's changes when it declares `listChanged`, resource updates when `resources.subscribe`.
 */
export function honouredFilter(filter: SubscriptionFilter, capabilities: Json): SubscriptionFilter {
  const honoured: SubscriptionFilter = {};
  for (const flag of FLAGS) {
    const capability = capabilities[CAPABILITY[flag]];
    if (filter[flag] === true && isObject(capability) && capability.listChanged === true) {
      honoured[flag] = true;
    }
  }
  const resources = capabilities.resources;
  if (filter.resourceSubscriptions && isObject(resources) && resources.subscribe === true) {
    honoured.resourceSubscriptions = [...new Set(filter.resourceSubscriptions)];
  }
  return honoured;
}

/** The first message of a listen stream. */
export function acknowledgement(listenId: RequestId, honoured: SubscriptionFilter) {
  return tagged(listenId, "notifications/subscriptions/acknowledged", { notifications: honoured });
}

/**
 * A 2025 backend's notification as it goes on a listen stream, tagged with the listen's id;
 * undefined when the honoured filter does not let it through (progress and logs never do:
 * they belong to a request's own stream).
 */
export function notificationForListen(
  notification: RpcNotification,
  listenId: RequestId,
  honoured: SubscriptionFilter,
): RpcNotification | undefined {
  const flag = LIST_CHANGED[notification.method];
  const passes = flag !== undefined
    ? honoured[flag] === true
    : notification.method === "notifications/resources/updated" &&
      typeof notification.params?.uri === "string" &&
      (honoured.resourceSubscriptions ?? []).includes(notification.params.uri);
  return passes ? tagged(listenId, notification.method, notification.params ?? {}) : undefined;
}

/** The listen's answer when the gateway ends it gracefully (shutdown, backend gone). */
export function listenEndResponse(listenId: RequestId): RpcResponse {
  return {
    jsonrpc: "2.0",
    id: listenId,
    result: { resultType: "complete", _meta: { [MetaKey.subscriptionId]: listenId } },
  };
}

function tagged(listenId: RequestId, method: string, params: Json): RpcNotification {
  const meta = { ...metaOf(params), [MetaKey.subscriptionId]: listenId };
  return { jsonrpc: "2.0", method, params: withMeta(params, meta) };
}

/**
 * The filter of the backend listen that stands for a 2025 session's unasked notifications:
 * every list change the 2026 backend declares, and updates of the URIs the session subscribed.
 */
export function listenFilterForSession(
  capabilities: Json,
  subscribedUris: readonly string[],
): SubscriptionFilter {
  const everything: SubscriptionFilter = {
    toolsListChanged: true,
    promptsListChanged: true,
    resourcesListChanged: true,
  };
  if (subscribedUris.length > 0) everything.resourceSubscriptions = [...subscribedUris];
  return honouredFilter(everything, capabilities);
}

/** A 2026 listen notification as a 2025 session gets it: without the listen's tag. */
export function notificationFor2025(notification: RpcNotification): RpcNotification {
  const meta = metaOf(notification.params);
  if (!notification.params || !meta || !(MetaKey.subscriptionId in meta)) return notification;
  const params = withMeta(notification.params, without(meta, [MetaKey.subscriptionId]));
  if (Object.keys(params).length > 0) return { ...notification, params };
  const { params: _tag, ...rest } = notification;
  return rest;
}
