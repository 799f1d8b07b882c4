/**
 * The notifications a 2025 session gets unasked (list changes, updates of the resources it
 * subscribed), from a backend that speaks MCP 2026-07-28 and sends them only on a
 * `subscriptions/listen` stream. One listen per session, its filter what the backend declares
 * plus the subscribed URIs (subscriptions.ts). A change of URIs opens the new listen first and
 * ends the old one once the new is acknowledged, so no update falls between the two. A listen
 * the backend drops is opened again after a pause, a bounded number of times in a row.
 */
import { type Clock, type Timer, waitAtMost } from "../../core/clock.ts";
import type { Logger } from "../../observability/logger.ts";
import type { RpcNotification } from "../protocol/jsonrpc.ts";
import { MetaKey } from "../protocol/protocol_versions.ts";
import { type Json, metaOf } from "../translate/json_shape.ts";
import { messageFor2026Backend, type SessionMeta } from "../translate/request_meta.ts";
import {
  listenFilterForSession,
  notificationFor2025,
  type SubscriptionFilter,
} from "../translate/subscriptions.ts";
import type { ModernWire } from "./modern_wire.ts";

/** Listens dropped in a row before the gateway stops opening them again. */
const MAX_REOPENS = 5;
/** The pause before the first re-open; each further one waits this much longer. */
const REOPEN_PAUSE_MS = 1_000;

export interface ListenOptions {
  wire: ModernWire;
  clock: Clock;
  logger: Logger;
  /** The session's envelope (undefined before initialize). */
  meta(): SessionMeta | undefined;
  /** The backend's capabilities, from its `server/discover`. */
  capabilities(): Json;
  /** A fresh request id for the backend. */
  nextId(): string;
  /** Sends a notification to the session. */
  deliver(notification: RpcNotification): void;
  /** How long a listen may take to be acknowledged. */
  ackTimeoutMs: number;
}

interface Listen {
  id: string;
  abort: AbortController;
  /** Settles on the acknowledgement, or with why there will be none. */
  acked: PromiseWithResolvers<{ why?: string }>;
  ended: boolean;
}

export class ListenKeeper {
  readonly #uris = new Set<string>();
  /** Every listen open or opening, by id; `#current` is the one that counts. */
  readonly #live = new Map<string, Listen>();
  #current?: Listen;
  #queue: Promise<unknown> = Promise.resolve();
  #started = false;
  #closed = false;
  #drops = 0;
  #reopen?: Timer;

  constructor(private readonly options: ListenOptions) {}

  /** The session is ready for notifications: open the listen its list changes need. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    void this.#refresh();
  }

  /** Adds `uri`'s updates; resolves with why the backend refused, or undefined. */
  async subscribe(uri: string): Promise<string | undefined> {
    if (this.#uris.has(uri)) return undefined;
    this.#uris.add(uri);
    this.#started = true;
    const why = await this.#refresh();
    if (why !== undefined) this.#uris.delete(uri);
    return why;
  }

  async unsubscribe(uri: string): Promise<void> {
    if (!this.#uris.delete(uri)) return;
    await this.#refresh();
  }

  /**
   * A backend notification: true when it belongs to a listen (and was delivered untagged, or
   * dropped as an acknowledgement or a leftover of an ended listen).
   */
  notification(notification: RpcNotification): boolean {
    const tag = metaOf(notification.params)?.[MetaKey.subscriptionId];
    if (tag === undefined) return false;
    const listen = this.#live.get(String(tag));
    if (!listen) return true;
    if (notification.method === "notifications/subscriptions/acknowledged") {
      listen.acked.resolve({});
    } else {
      this.options.deliver(notificationFor2025(notification));
    }
    return true;
  }

  close(): void {
    this.#closed = true;
    this.#reopen?.clear();
    for (const listen of [...this.#live.values()]) this.#end(listen);
    this.#current = undefined;
  }

  /** One change at a time, in order. */
  #refresh(): Promise<string | undefined> {
    const next = this.#queue.then(() => this.#refreshNow());
    this.#queue = next.catch(() => {});
    return next;
  }

  async #refreshNow(): Promise<string | undefined> {
    const meta = this.options.meta();
    if (this.#closed || !meta) return undefined;
    const filter = listenFilterForSession(this.options.capabilities(), [...this.#uris]);
    if (Object.keys(filter).length === 0) {
      this.#end(this.#current);
      this.#current = undefined;
      return undefined;
    }
    const next = this.#open(filter, meta);
    const settled = await waitAtMost(
      this.options.clock,
      this.options.ackTimeoutMs,
      next.acked.promise,
    );
    if (settled?.why !== undefined || settled === undefined || this.#closed) {
      this.#end(next);
      return settled?.why ??
        `the backend did not acknowledge subscriptions/listen within ${
          this.options.ackTimeoutMs / 1000
        }s`;
    }
    const previous = this.#current;
    this.#current = next;
    this.#drops = 0;
    this.#end(previous);
    return undefined;
  }

  #open(filter: SubscriptionFilter, meta: SessionMeta): Listen {
    const id = this.options.nextId();
    const listen: Listen = {
      id,
      abort: new AbortController(),
      acked: Promise.withResolvers(),
      ended: false,
    };
    this.#live.set(id, listen);
    const request = messageFor2026Backend(
      {
        jsonrpc: "2.0" as const,
        id,
        method: "subscriptions/listen",
        params: { notifications: filter },
      },
      meta,
    );
    this.options.wire.call(request, { signal: listen.abort.signal }).then(
      ({ response }) => this.#dropped(listen, response.error?.message ?? "it ended the listen"),
      (error: Error) => this.#dropped(listen, error.message),
    );
    return listen;
  }

  /** The backend ended a listen the gateway had not: opened again if it was the current one. */
  #dropped(listen: Listen, why: string): void {
    listen.acked.resolve({ why: `the backend refused subscriptions/listen: ${why}` });
    if (listen.ended) return;
    listen.ended = true;
    this.#live.delete(listen.id);
    if (listen !== this.#current || this.#closed) return;
    this.#current = undefined;
    if (++this.#drops > MAX_REOPENS) {
      this.options.logger.warn("the backend keeps ending its subscriptions/listen; not reopened", {
        why,
      });
      return;
    }
    this.options.logger.info("the backend ended its subscriptions/listen; reopening", { why });
    this.#reopen = this.options.clock.setTimeout(
      () => void this.#refresh(),
      REOPEN_PAUSE_MS * this.#drops,
    );
  }

  #end(listen: Listen | undefined): void {
    if (!listen || listen.ended) return;
    listen.ended = true;
    this.#live.delete(listen.id);
    listen.abort.abort();
  }
}
