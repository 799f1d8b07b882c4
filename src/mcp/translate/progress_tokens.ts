/**
 * Progress tokens on a backend link that several callers share (a 2026 person's clients on
 * one link, an aggregate's members): two callers may both pick `progressToken: 1`, so each
 * request goes onto the link with a token of the link's own, and each progress notification
 * comes back with the caller's token and says whose it is.
 */
import type { RpcNotification } from "../protocol/jsonrpc.ts";
import { isObject, type Json, metaOf, withMeta } from "./json_shape.ts";

type ProgressToken = string | number;

interface Owner {
  caller: string;
  token: ProgressToken;
}

interface WithParams {
  params?: Record<string, unknown>;
}

export class ProgressTokens {
  readonly #owners = new Map<string, Owner>();
  #next = 1;

  /** `prefix` keeps the link's tokens apart from tokens other code puts on the same link. */
  constructor(private readonly prefix = "gh-progress") {}

  /**
   * `request` as it goes onto the link, with its `progressToken` (if any) swapped for one of
   * the link's own; `linkToken` is what to release once the request is answered.
   */
  inbound<T extends WithParams>(caller: string, request: T): { request: T; linkToken?: string } {
    const meta = metaOf(request.params);
    const token = meta?.progressToken;
    if (typeof token !== "string" && typeof token !== "number") return { request };
    const linkToken = `${this.prefix}-${this.#next++}`;
    this.#owners.set(linkToken, { caller, token });
    const params = withMeta(request.params ?? {}, { ...meta, progressToken: linkToken });
    return { request: { ...request, params }, linkToken };
  }

  /**
   * A progress notification from the link, back with its caller's token, and the caller;
   * undefined for a token the link never gave out (or already released).
   */
  outbound(
    notification: RpcNotification,
  ): { caller: string; notification: RpcNotification } | undefined {
    if (notification.method !== "notifications/progress") return undefined;
    const params: Json = isObject(notification.params) ? notification.params : {};
    const owner = typeof params.progressToken === "string"
      ? this.#owners.get(params.progressToken)
      : undefined;
    if (!owner) return undefined;
    return {
      caller: owner.caller,
      notification: { ...notification, params: { ...params, progressToken: owner.token } },
    };
  }

  /** Forgets a token once its request is answered: later progress for it is dropped. */
  release(linkToken: string | undefined): void {
    if (linkToken !== undefined) this.#owners.delete(linkToken);
  }

  /** Tokens given out and not released. */
  get size(): number {
    return this.#owners.size;
  }
}
