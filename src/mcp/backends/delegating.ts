/**
 * A backend `Transport` that passes everything to the one it wraps; the wrappers that change
 * one thing about a backend (errors masked, roots withheld) extend it and override only that.
 */
import type { JSONRPCMessage, Transport } from "../../sdk.ts";

type SendOptions = Parameters<Transport["send"]>[1];

export class DelegatingTransport implements Transport {
  constructor(protected readonly inner: Transport) {}

  get onmessage(): Transport["onmessage"] {
    return this.inner.onmessage;
  }
  set onmessage(handler: Transport["onmessage"]) {
    this.inner.onmessage = handler;
  }
  get onerror(): Transport["onerror"] {
    return this.inner.onerror;
  }
  set onerror(handler: Transport["onerror"]) {
    this.inner.onerror = handler;
  }
  get onclose(): Transport["onclose"] {
    return this.inner.onclose;
  }
  set onclose(handler: Transport["onclose"]) {
    this.inner.onclose = handler;
  }
  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(message: JSONRPCMessage, options?: SendOptions): Promise<void> {
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
