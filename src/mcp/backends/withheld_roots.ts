/**
 * A backend that must not learn the client's roots (`forwardRoots: false`): roots may widen
 * what a backend lets people reach (server-filesystem replaces its directories with them), so
 * the gateway takes the client's place for this one capability. The backend's `initialize`
 * shows no `roots` capability, the client's `notifications/roots/list_changed` is dropped, and
 * a `roots/list` from the backend is answered here and never reaches the client.
 */
import type { JSONRPCMessage, Transport } from "../../sdk.ts";
import { RpcErrorCode } from "../protocol/jsonrpc.ts";
import { DelegatingTransport } from "./delegating.ts";

export const ROOTS_WITHHELD =
  "the gateway does not forward roots to this server (forwardRoots: false)";

type Message = { id?: unknown; method?: unknown; params?: Record<string, unknown> };

export class WithheldRoots extends DelegatingTransport {
  #onmessage: Transport["onmessage"];

  constructor(inner: Transport) {
    super(inner);
    inner.onmessage = (message, extra) => {
      const { id, method } = message as Message;
      if (method === "roots/list" && id !== undefined) return this.#refuse(id);
      this.#onmessage?.(message, extra);
    };
  }

  override get onmessage(): Transport["onmessage"] {
    return this.#onmessage;
  }
  override set onmessage(handler: Transport["onmessage"]) {
    this.#onmessage = handler;
  }

  override send(message: JSONRPCMessage, options?: Parameters<Transport["send"]>[1]) {
    const { id, method, params } = message as Message;
    if (method === "notifications/roots/list_changed") return Promise.resolve();
    if (method === "initialize" && id !== undefined) {
      const capabilities = params?.capabilities as Record<string, unknown> | undefined;
      if (capabilities && "roots" in capabilities) {
        // A copy: the client's own message (and the session's record of it) keep its roots.
        const { roots: _, ...others } = capabilities;
        message = { ...message, params: { ...params, capabilities: others } } as JSONRPCMessage;
      }
    }
    return this.inner.send(message, options);
  }

  /**
   * An error rather than an empty list: the backend was told the client has no roots
   * capability, and "method not found" is what such a client answers. An empty list would
   * claim the client has roots and none are open, a made-up fact a server may act on.
   */
  #refuse(id: unknown): void {
    this.inner.send(
      {
        jsonrpc: "2.0",
        id,
        error: { code: RpcErrorCode.methodNotFound, message: ROOTS_WITHHELD },
      } as JSONRPCMessage,
    ).catch(() => {});
  }
}
