/** Builds an aggregate's "backend" for one client session: member links over one shared cache. */
import { dependsOnPerson } from "../../config/per_person.ts";
import type { AggregateServerConfig, BackendServerConfig } from "../../config/types.ts";
import type { Clock } from "../../core/clock.ts";
import type { Deadlines } from "../../core/deadlines.ts";
import {
  type Backend,
  type BackendOptions,
  connectBackend,
  type PersonTokens,
} from "../backends/connect.ts";
import type { PlaceholderValues } from "../backends/placeholders.ts";
import { type AggregateOptions, AggregateTransport } from "./aggregate.ts";
import type { DiscoveryCache } from "./cache.ts";

/**
 * Members are left out of lists after this long, or half the request timeout if that is
 * shorter, so the aggregate answers with the others before the client's request times out.
 */
const DISCOVERY_TIMEOUT_MS = 10_000;
/** A member that failed is tried again after this long. */
const RETRY_AFTER_MS = 2_000;

export function createAggregateBackend(
  server: AggregateServerConfig,
  members: BackendServerConfig[],
  user: PlaceholderValues,
  options: BackendOptions & {
    cache: DiscoveryCache;
    requestTimeoutMs: number;
    clock: Clock;
    deadlines: Deadlines;
    tokens?: PersonTokens;
    /** The member's tools the person may use (their `tools:` policies); all when absent. */
    memberTools?: AggregateOptions["memberTools"];
  },
): Backend {
  // Each member waits as long as its own requestTimeout says, else as long as the aggregate
  // does. The session around the aggregate waits for the slowest (config/request_timeouts.ts),
  // so only members that must answer sooner than that need a timer of their own.
  const timeoutOf = (member: BackendServerConfig) =>
    member.requestTimeoutMs ?? options.requestTimeoutMs;
  const personScope = `user:${
    JSON.stringify([user["user.id"], user["user.email"] ?? "", user["user.groups"] ?? ""])
  }`;
  const longest = Math.max(options.requestTimeoutMs, ...members.map(timeoutOf));
  const transport = new AggregateTransport({
    server,
    members,
    connect: (member) =>
      connectBackend(
        member,
        user,
        { ...options, requestTimeoutMs: timeoutOf(member) },
        options.tokens,
      ),
    callTimeoutMs: (member) => {
      const ms = timeoutOf(member);
      return ms < longest ? ms : undefined;
    },
    watchCredentials: options.tokens?.watch,
    cache: options.cache,
    // The per-person rule (config/per_person.ts): a member whose answers can depend on who asks
    // is cached per person, never in everyone's scope; and per what of the person it is told,
    // so a list made for the groups someone has since lost is not served to them.
    scopeOf: (member) => dependsOnPerson(member) ? personScope : "*",
    memberTools: options.memberTools,
    discoveryTimeoutMs: Math.min(DISCOVERY_TIMEOUT_MS, options.requestTimeoutMs / 2),
    retryAfterMs: RETRY_AFTER_MS,
    clock: options.clock,
    deadlines: options.deadlines,
    logger: options.logger,
  });
  return { transport, close: () => transport.close(), detach: () => transport.close() };
}
