/**
 * A backend connection that speaks whichever MCP revision the backend does, decided at the
 * session's `initialize` from the server's `protocol:` setting. `2025-11-25` passes everything
 * to the 2025 transport, as before. `2026-07-28` hands the session to a `ModernBackend`.
 * `auto` asks the backend (revision_probe.ts) unless it is remembered to speak 2025, and a 2025
 * initialize the backend refuses with -32022 is asked again: a backend that moved to 2026 is
 * followed there. Whatever the setting, a refusal by a 2026-only backend is said in words that
 * name the backend, what it speaks, and the setting to change.
 *
 * On stdio both revisions share the session's child: a 2026 server decides per connection by
 * its first message (stdio.mdx), so `server/discover` goes first; a child that ends when asked
 * (some 2025 servers exit on a request before `initialize`) is replaced by a fresh one.
 */
import type { BackendProtocol } from "../../config/types.ts";
import type { Clock } from "../../core/clock.ts";
import type { Logger } from "../../observability/logger.ts";
import type { JSONRPCMessage, Transport } from "../../sdk.ts";
import { classify, errorResponse, type RpcRequest, type RpcResponse } from "../protocol/jsonrpc.ts";
import { ModernBackend } from "./modern_backend.ts";
import type { ModernWire } from "./modern_wire.ts";
import {
  httpRefusal,
  probeRevision,
  refusalMessage,
  type RevisionMemory,
  type Verdict,
} from "./revision_probe.ts";

type RpcError = NonNullable<RpcResponse["error"]>;
type SendOptions = Parameters<Transport["send"]>[1];

/** The code a 2026-only server refuses a 2025 `initialize` with. */
const UNSUPPORTED_VERSION = -32022;
/** What a 2026 server answers a 2025 initialize with (reject mode; or its era fixed first). */
const MODERN_REFUSALS = new Set([UNSUPPORTED_VERSION, -32601]);
/** A race entrant that never finishes. */
const NEVER = new Promise<never>(() => {});

export interface RevisionSwitchOptions {
  server: string;
  protocol: BackendProtocol;
  /** Where the verdicts are kept, and this server's key there. */
  memory: RevisionMemory;
  key: string;
  clock: Clock;
  logger: Logger;
  /** How long the backend gets to answer `server/discover`. */
  timeoutMs: number;
  /** A new 2025 transport (stdio: a new child; HTTP: the SDK's transport). */
  legacy(): Transport;
  /** The 2026 wire; on stdio it runs on `pipe`, the started child. */
  modern(pipe: Transport): ModernWire;
}

export class RevisionSwitch implements Transport {
  onmessage?: Transport["onmessage"];
  onerror?: Transport["onerror"];
  onclose?: Transport["onclose"];
  #pipe: Transport;
  #active?: Transport;
  #wire?: ModernWire;
  /** Set while a probe runs on the pipe: it ended meanwhile, and a fresh one is needed. */
  #pipeEnded = false;
  /** The 2025 initialize whose answer is looked at before the session gets it. */
  #watching?: { request: RpcRequest; reprobe: boolean };
  #probes = 0;
  #deciding = false;
  #closed = false;

  constructor(private readonly options: RevisionSwitchOptions) {
    this.#pipe = options.legacy();
  }

  /** Whether the backend turned out to speak 2026-07-28 (the session is then served here). */
  get speaksModern(): boolean {
    return this.#active !== undefined && this.#active !== this.#pipe;
  }

  /** The 2025 transport's session id (none once the backend is known to speak 2026). */
  get sessionId(): string | undefined {
    return this.#active === this.#pipe ? this.#pipe.sessionId : undefined;
  }

  setProtocolVersion(version: string): void {
    if (this.#active === this.#pipe) this.#pipe.setProtocolVersion?.(version);
  }

  start(): Promise<void> {
    return this.#pipe.start();
  }

  send(message: JSONRPCMessage, options?: SendOptions): Promise<void> {
    if (this.#active) return this.#active.send(message, options);
    const classified = classify(message);
    if (classified?.kind === "request" && classified.message.method === "initialize") {
      this.#deciding = true;
      return this.#initialize(classified.message).finally(() => this.#deciding = false);
    }
    // While initialize decides, nothing else has a backend to go to (a cancellation of the
    // initialize itself, when the session gives up, ends the session anyway).
    if (this.#deciding) return Promise.resolve();
    // A session continued from elsewhere has no initialize here: its backend session is 2025.
    this.#useLegacy();
    return this.#pipe.send(message, options);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#active && this.#active !== this.#pipe) await this.#active.close().catch(() => {});
    await this.#wire?.close().catch(() => {});
    await this.#pipe.close().catch(() => {});
    this.onclose?.();
  }

  /** The backend's end went away by itself: the rest is let go, the session told at once. */
  #ended(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#wire?.close().catch(() => {});
    this.#pipe.close().catch(() => {});
    this.onclose?.();
  }

  async #initialize(request: RpcRequest): Promise<void> {
    const { protocol, memory, key } = this.options;
    if (protocol === "2026-07-28") return this.#useModern(request);
    if (protocol === "2025-11-25") return this.#legacyInitialize(request, false);
    if (memory.get(key) === "2025-11-25") return this.#legacyInitialize(request, true);
    const wire = this.#wire ??= this.options.modern(this.#pipe);
    if (wire.kind === "stdio") return this.#askOnPipe(request, wire);
    const verdict = await this.#probe(request);
    if (verdict.revision === "2026-07-28") {
      memory.remember(key, "2026-07-28");
      return this.#useModern(request, verdict);
    }
    this.#learnedLegacy(verdict);
    return this.#legacyInitialize(request, false);
  }

  /**
   * stdio: the session's `initialize` goes right behind `server/discover` on the same pipe, so
   * a 2025 server that ignores the question costs no wait: whichever answer decides first
   * wins. A 2026 server answers discover first (it reads in order, and its era is fixed by
   * the first message); its refusal of the initialize behind it is dropped.
   */
  async #askOnPipe(request: RpcRequest, wire: ModernWire): Promise<void> {
    const stop = new AbortController();
    const asked = this.#probe(request, stop.signal);
    const init = wire.call(request).then(({ response }) => response);
    // Answered before discover: not a 2026 server, unless the answer is a 2026 refusal.
    const initialized = init.then(
      (r) => MODERN_REFUSALS.has(r.error?.code ?? 0) ? NEVER : r,
      () => NEVER,
    );
    const first = await Promise.race([asked, initialized]);
    if (!("revision" in first)) {
      stop.abort();
      this.#learnedLegacy({ revision: "2025-11-25", why: "it answered initialize first" });
      this.#useLegacy();
      this.onmessage?.(first as JSONRPCMessage);
      return;
    }
    if (first.revision === "2026-07-28") {
      this.options.memory.remember(this.options.key, "2026-07-28");
      return this.#useModern(request, first);
    }
    this.#learnedLegacy(first);
    if (this.#pipeEnded) return this.#legacyInitialize(request, false);
    const response = await init.catch((error) => {
      this.#useLegacy();
      throw error;
    });
    this.#useLegacy();
    this.#watching = { request, reprobe: false };
    if (!this.#refusedHere(response as JSONRPCMessage)) {
      this.onmessage?.(response as JSONRPCMessage);
    }
  }

  /** The backend speaks 2025 (remembered), or could not be asked (nothing remembered). */
  #learnedLegacy(verdict: Verdict): void {
    const { memory, key, logger } = this.options;
    if (verdict.revision !== "2025-11-25") return memory.forget(key);
    if (verdict.silent) {
      // Asking cost this session the wait; later sessions do not ask.
      logger.warn(
        "the backend did not answer server/discover: taking it for MCP 2025-11-25 " +
          "(say protocol: 2025-11-25 for it to skip the question)",
        { why: verdict.why },
      );
    }
    logger.info("the backend speaks MCP 2025-11-25", { why: verdict.why });
    memory.remember(key, "2025-11-25");
  }

  async #probe(request: RpcRequest, signal?: AbortSignal): Promise<Verdict> {
    const { clock, timeoutMs } = this.options;
    this.#pipeEnded = false;
    const wire = this.#wire ??= this.options.modern(this.#pipe);
    wire.onclose = () => this.#pipeEnded = true;
    const id = `gatehouse-discover-${++this.#probes}`;
    return await probeRevision(wire, request.params, { id, timeoutMs, clock, signal });
  }

  /** A stdio child that ended while it was asked is replaced (its wire goes with it). */
  async #replacePipeIfEnded(): Promise<void> {
    if (!this.#pipeEnded || this.#closed) return;
    this.#wire = undefined;
    this.#pipe = this.options.legacy();
    await this.#pipe.start();
  }

  #useModern(request: RpcRequest, discovered?: Verdict): Promise<void> {
    const { server, clock, logger, timeoutMs } = this.options;
    const wire = this.#wire ??= this.options.modern(this.#pipe);
    const backend = new ModernBackend({
      server,
      wire,
      clock,
      logger,
      timeoutMs,
      discovered: discovered?.revision === "2026-07-28" ? discovered : undefined,
    });
    backend.onmessage = (message) => this.onmessage?.(message);
    backend.onerror = (error) => this.onerror?.(error);
    backend.onclose = () => this.#ended();
    this.#active = backend;
    return backend.send(request as JSONRPCMessage);
  }

  #useLegacy(): void {
    const pipe = this.#pipe;
    this.#active = pipe;
    pipe.onmessage = (message, extra) => {
      if (this.#watching && this.#refusedHere(message)) return;
      this.onmessage?.(message, extra);
    };
    pipe.onerror = (error) => this.onerror?.(error);
    pipe.onclose = () => this.#ended();
  }

  async #legacyInitialize(request: RpcRequest, reprobe: boolean): Promise<void> {
    await this.#replacePipeIfEnded();
    this.#useLegacy();
    this.#watching = { request, reprobe };
    try {
      await this.#pipe.send(request as JSONRPCMessage);
    } catch (error) {
      // Streamable HTTP: a refusal comes as an HTTP 4xx, which the SDK's transport throws.
      const refusal = httpRefusal(error);
      if (!this.#watching || refusal?.code !== UNSUPPORTED_VERSION) throw error;
      this.#watching = undefined;
      await this.#refused(request, refusal, reprobe);
    }
  }

  /** True when `message` is a -32022 refusal of the watched initialize (handled here). */
  #refusedHere(message: JSONRPCMessage): boolean {
    const classified = classify(message);
    const watched = this.#watching!;
    if (classified?.kind !== "response" || classified.message.id !== watched.request.id) {
      return false;
    }
    this.#watching = undefined;
    const error = classified.message.error;
    if (error?.code !== UNSUPPORTED_VERSION) return false;
    void this.#refused(watched.request, error, watched.reprobe);
    return true;
  }

  /** A 2025 initialize refused with -32022: asked again under `auto`, else explained. */
  async #refused(request: RpcRequest, error: RpcError, reprobe: boolean): Promise<void> {
    const { server, protocol, memory, key, logger } = this.options;
    let why = `it refused initialize: ${error.message}`;
    if (reprobe) {
      const verdict = await this.#probe(request);
      if (verdict.revision === "2026-07-28") {
        logger.info("the backend now speaks MCP 2026-07-28", { was: "2025-11-25" });
        memory.remember(key, "2026-07-28");
        return await this.#useModern(request, verdict);
      }
      memory.forget(key);
      why += `, and ${verdict.why}`;
      this.#useLegacy();
    }
    const message = refusalMessage(server, protocol, error, why);
    this.onmessage?.(errorResponse(request.id, error.code, message, error.data));
  }
}
