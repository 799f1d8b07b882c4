/**
 * The V8 inspector of a process started with `--inspect=127.0.0.1:<port>`: the memory scenario
 * collects garbage before each reading (no process collects on request by itself) and reads
 * the JavaScript heap next to the resident memory.
 */
import { sleep } from "./processes.ts";

export interface HeapReading {
  /** Bytes of live objects on the V8 heap. */
  used: number;
  /** Bytes V8 holds for its heap (used or not). */
  total: number;
  /** Bytes of ArrayBuffer contents (outside the heap: socket read buffers, encoded text). */
  buffers: number;
}

export class Inspector {
  #next = 0;
  readonly #pending = new Map<number, (message: Record<string, unknown>) => void>();

  private constructor(private readonly socket: WebSocket) {
    socket.onmessage = (event) => {
      const message = JSON.parse(event.data);
      if (typeof message.id === "number") this.#pending.get(message.id)?.(message);
    };
  }

  /** A free port for `--inspect=127.0.0.1:<port>`. */
  static flag(port: number): string {
    return `--inspect=127.0.0.1:${port}`;
  }

  /** Attaches to the process's main isolate (bounded wait for the inspector to listen). */
  static async attach(port: number, timeoutMs = 15_000): Promise<Inspector> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const targets: { title: string; webSocketDebuggerUrl: string }[] =
          await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
        const main = targets.find((t) => t.title.includes("main")) ?? targets[0];
        if (main) {
          const socket = new WebSocket(main.webSocketDebuggerUrl);
          await new Promise((resolve, reject) => {
            socket.onopen = resolve;
            socket.onerror = reject;
          });
          return new Inspector(socket);
        }
      } catch (error) {
        if (Date.now() > deadline) {
          throw new Error(`no inspector on 127.0.0.1:${port}: ${error}`);
        }
      }
      await sleep(100);
    }
  }

  async #call(method: string): Promise<Record<string, unknown>> {
    const id = ++this.#next;
    const answered = new Promise<Record<string, unknown>>((resolve) => {
      this.#pending.set(id, resolve);
    });
    this.socket.send(JSON.stringify({ id, method, params: {} }));
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const message = await Promise.race([
        answered,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`${method}: no answer in 30 s`)), 30_000);
        }),
      ]);
      if (message.error) throw new Error(`${method}: ${JSON.stringify(message.error)}`);
      return message.result as Record<string, unknown>;
    } finally {
      clearTimeout(timer);
      this.#pending.delete(id);
    }
  }

  /** A full collection, twice: the first can leave objects that only die with finalizers. */
  async collectGarbage(): Promise<void> {
    await this.#call("HeapProfiler.collectGarbage");
    await this.#call("HeapProfiler.collectGarbage");
  }

  async heap(): Promise<HeapReading> {
    const usage = await this.#call("Runtime.getHeapUsage");
    return {
      used: Number(usage.usedSize),
      total: Number(usage.totalSize),
      buffers: Number(usage.backingStorageSize ?? 0),
    };
  }

  close(): void {
    this.socket.close();
  }
}
