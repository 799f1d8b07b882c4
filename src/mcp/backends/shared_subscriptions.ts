/**
 * Resource subscriptions of the sessions on one shared process (shared_process.ts): the process
 * hears one `resources/subscribe` per URI, when the first session wants it, and one
 * `resources/unsubscribe` when the last lets go; its updates reach only the sessions that want
 * them.
 */
import type { ProcessPort } from "./process_port.ts";

export class SharedSubscriptions {
  readonly #subscribers = new Map<string, Set<ProcessPort>>();

  /** True when the process must hear the subscription (the first session to want `uri`). */
  subscribe(port: ProcessPort, uri: string): boolean {
    if (port.subscriptions.has(uri)) return false;
    port.subscriptions.add(uri);
    let subscribers = this.#subscribers.get(uri);
    if (!subscribers) this.#subscribers.set(uri, subscribers = new Set());
    subscribers.add(port);
    return subscribers.size === 1;
  }

  /** True when the process must hear it (the last session wanting `uri` let go). */
  unsubscribe(port: ProcessPort, uri: string): boolean {
    if (!port.subscriptions.delete(uri)) return false;
    const subscribers = this.#subscribers.get(uri);
    subscribers?.delete(port);
    if (subscribers && subscribers.size > 0) return false;
    this.#subscribers.delete(uri);
    return true;
  }

  /** The URIs the process must be told to forget now that `port`'s session left. */
  leave(port: ProcessPort): string[] {
    return [...port.subscriptions].filter((uri) => this.unsubscribe(port, uri));
  }

  /** The sessions that want updates of `uri`. */
  of(uri: unknown): Iterable<ProcessPort> {
    return (typeof uri === "string" ? this.#subscribers.get(uri) : undefined) ?? [];
  }
}
