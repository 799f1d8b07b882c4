/**
 * One session's way into a shared stdio process (shared_process.ts): the backend `Transport`
 * its session uses as if the process were its own. Starting joins the process (starting it if
 * it is not running); closing leaves it, which cancels only this session's calls.
 */
import type { JSONRPCMessage, Transport } from "../../sdk.ts";
import type { RequestId } from "../protocol/jsonrpc.ts";

/** What a port needs of its process (shared_process.ts). */
export interface PortHost {
  readonly pid: number | undefined;
  join(port: ProcessPort): Promise<void>;
  fromPort(port: ProcessPort, message: JSONRPCMessage): Promise<void>;
  leave(port: ProcessPort): void;
}

export class ProcessPort implements Transport {
  onmessage?: Transport["onmessage"];
  onerror?: Transport["onerror"];
  onclose?: Transport["onclose"];

  /** What this session's client declared at `initialize`: what it may be asked. */
  clientCapabilities: Record<string, unknown> = {};
  /** This session's calls in flight: its own id (idKey) → the process's id for it. */
  readonly calls = new Map<string, string>();
  /** URIs this session subscribed to. */
  readonly subscriptions = new Set<string>();
  #closed = false;

  constructor(private readonly process: PortHost, readonly name: string) {}

  /** The shared process's pid (tests and operators). */
  get pid(): number | undefined {
    return this.process.pid;
  }

  async start(): Promise<void> {
    await this.process.join(this);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) throw new Error("the session has left the shared backend process");
    await this.process.fromPort(this, message);
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    this.process.leave(this);
    this.onclose?.();
    return Promise.resolve();
  }

  /** A message of the process's for this session; `related`: the request it answers. */
  deliver(message: JSONRPCMessage, _related?: RequestId): void {
    if (!this.#closed) this.onmessage?.(message);
  }

  /** The process ended under this session. */
  ended(reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.onerror?.(new Error(reason));
    this.onclose?.();
  }
}
