/**
 * A legacy HTTP+SSE backend (MCP 2024-11-05). Its session lives exactly as long as its event
 * stream: the SDK's EventSource would quietly reconnect after a drop and get a new, never
 * initialized backend session. Here a broken stream after start ends the connection instead,
 * so the client session ends at once with the reason rather than failing in odd ways later.
 */
import { type JSONRPCMessage, SSEClientTransport, SseError, type Transport } from "../../sdk.ts";

export class LegacySseBackend implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;
  #started = false;
  #closed = false;

  constructor(private readonly inner: SSEClientTransport) {
    inner.onmessage = (message) => this.onmessage?.(message);
    inner.onclose = () => this.#closedOnce();
    inner.onerror = (error) => {
      if (this.#started && error instanceof SseError) {
        this.onerror?.(new Error(`the backend's event stream broke (${error.message})`));
        void this.close();
        return;
      }
      this.onerror?.(error);
    };
  }

  async start(): Promise<void> {
    await this.inner.start();
    this.#started = true;
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.inner.send(message);
  }

  async close(): Promise<void> {
    await this.inner.close().catch(() => {});
    this.#closedOnce();
  }

  #closedOnce(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.onclose?.();
  }
}
