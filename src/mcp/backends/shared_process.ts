/**
 * One stdio process serving several sessions (`share: person` or `share: all`), each through a
 * `ProcessPort` of its own, so that sharing stays invisible to every client:
 *
 * - the gateway initializes the process once; each session's `initialize` is answered from
 *   what the process declared, with the session's own negotiated version;
 * - each request goes on under an id (and progress token) of the process's own, so two
 *   sessions that both number from 1 never collide, and the answer goes back to its session;
 * - a request of the process for input (elicitation, sampling, roots) goes to the session of
 *   the one call in flight that may take input (as on a stateless link, link_calls.ts), and
 *   only if that session's client declared the capability and, on everyone's process, the
 *   call never shared the process with another person's (shared_attribution.ts); otherwise it
 *   is refused, never guessed; a log line that names no call likewise;
 * - list changes reach every session on the process, resource updates only the sessions that
 *   subscribed (the process hears one subscribe per URI, and one unsubscribe when the last
 *   session lets go);
 * - a session's cancellation names only its own calls, and its leaving cancels only them.
 */
import type { Clock } from "../../core/clock.ts";
import { waitAtMost } from "../../core/clock.ts";
import type { Logger } from "../../observability/logger.ts";
import type { JSONRPCMessage, Transport } from "../../sdk.ts";
import {
  classify,
  errorResponse,
  idKey,
  type RequestId,
  RpcErrorCode,
  type RpcNotification,
  type RpcRequest,
  type RpcResponse,
} from "../protocol/jsonrpc.ts";
import {
  isSupportedProtocolVersion,
  LATEST_SESSION_PROTOCOL_VERSION,
  takesInput,
} from "../protocol/protocol_versions.ts";
import { ProgressTokens } from "../translate/progress_tokens.ts";
import { ProcessPort } from "./process_port.ts";
import { failedBeforeInitialize } from "./exit_words.ts";
import { SharedInputs } from "./shared_inputs.ts";
import { beginCall, type CallInFlight, noticeTo } from "./shared_attribution.ts";
import { SharedSubscriptions } from "./shared_subscriptions.ts";
import { declaredToEveryone, refusedForEveryone, withoutTask } from "./shared_everyone.ts";
import { UI_CLIENT_EXTENSIONS } from "../protocol/mcp_apps.ts";

const INITIALIZE_ID = "gh-share-initialize";

export interface SharedProcessOptions {
  /** The process's transport, not yet started (a `StdioBackend`). */
  transport: Transport;
  clock: Clock;
  logger: Logger;
  /** How long the process may take to start and answer the gateway's `initialize`. */
  startTimeoutMs: number;
  /** Shared by everyone (`share: all`): no roots, and nothing without an owner is broadcast. */
  everyone: boolean;
  /** The server's `forwardRoots`: whether roots may be asked of a session at all. */
  forwardRoots: boolean;
  /** The process ended (crashed, or stopped); `reason` in words for the sessions on it. */
  onEnded(reason: string): void;
  /** The last session left (the pool starts counting idle time). */
  onEmpty(): void;
  /** A notice of the process's that no session may hear was dropped (everyone's process). */
  onDropped?(method: string): void;
}

/** A request of a session's, on its way through the process. */
interface Call extends CallInFlight {
  port: ProcessPort;
  id: RequestId;
  method: string;
  linkToken?: string;
  /** A resources/subscribe whose failure takes the session's subscription back. */
  subscribes?: string;
}

export class SharedProcess {
  readonly #ports = new Set<ProcessPort>();
  readonly #calls = new Map<string, Call>();
  readonly #subscriptions = new SharedSubscriptions();
  readonly #progress = new ProgressTokens("gh-share-progress");
  readonly #inputs: SharedInputs;
  #next = 0;
  #portNames = 0;
  #ready?: Promise<Record<string, unknown>>;
  #initialized = Promise.withResolvers<RpcResponse>();
  #lastError?: string;
  #ended = false;

  constructor(private readonly options: SharedProcessOptions) {
    const transport = options.transport;
    transport.onmessage = (message) => this.#fromProcess(message);
    transport.onerror = (error) => this.#lastError = error.message;
    transport.onclose = () => this.#end(this.#lastError ?? "the backend closed its output");
    this.#inputs = new SharedInputs(
      (message) => this.#send(message),
      options.everyone,
      options.forwardRoots,
    );
  }

  /** Sessions on the process now. */
  get sessions(): number {
    return this.#ports.size;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** The process's pid, when it runs (tests and operators). */
  get pid(): number | undefined {
    return (this.options.transport as { pid?: number }).pid;
  }

  /**
   * A new session's way in. It counts as on the process from now (so that sessions opening at
   * once spread over a pool), and may use it once its transport has started.
   */
  port(): ProcessPort {
    const port = new ProcessPort(this, `p${++this.#portNames}`);
    this.#ports.add(port);
    return port;
  }

  /** Starts the process and initializes it, once; resolves with what it declared. */
  ready(): Promise<Record<string, unknown>> {
    return this.#ready ??= this.#start().catch(async (error) => {
      // A process that cannot be initialized serves nobody: stopped, the pool starts afresh.
      await this.stop((error as Error).message);
      throw error;
    });
  }

  async #start(): Promise<Record<string, unknown>> {
    const { transport, clock, startTimeoutMs, forwardRoots, everyone } = this.options;
    await transport.start();
    await this.#send({
      jsonrpc: "2.0",
      id: INITIALIZE_ID,
      method: "initialize",
      params: {
        protocolVersion: LATEST_SESSION_PROTOCOL_VERSION,
        // What any session's client may be asked; each session's own capabilities decide,
        // when the process asks, whether its client is asked (shared_inputs.ts).
        capabilities: {
          elicitation: { form: {}, url: {} },
          sampling: {},
          ...(forwardRoots && !everyone && { roots: {} }),
          // MCP Apps' UIs: a server that shows UIs only to hosts that render them does.
          extensions: UI_CLIENT_EXTENSIONS,
        },
        clientInfo: { name: "gatehouse", version: "shared" },
      },
    });
    const answer = await waitAtMost(clock, startTimeoutMs, this.#initialized.promise);
    if (!answer) {
      throw new Error(`the backend did not answer initialize within ${startTimeoutMs / 1000}s`);
    }
    if (!answer.result) {
      const why = answer.error?.message ?? "no reason";
      // Ended before it answered: said as for a session's own process (stdio.ts).
      throw new Error(
        this.#ended ? failedBeforeInitialize(why) : `the backend refused initialize: ${why}`,
      );
    }
    await this.#send({ jsonrpc: "2.0", method: "notifications/initialized" });
    return answer.result;
  }

  /** A port's session starts: once the process is running and initialized. */
  async join(port: ProcessPort): Promise<void> {
    if (this.#ended || !this.#ports.has(port)) {
      throw new Error(this.#lastError ?? "the shared backend process has ended");
    }
    try {
      await this.ready();
    } catch (error) {
      this.leave(port);
      throw error;
    }
  }

  /** A message of `port`'s session for the process. */
  async fromPort(port: ProcessPort, message: JSONRPCMessage): Promise<void> {
    if (this.#ended || !this.#ports.has(port)) {
      throw new Error("the shared backend process has ended");
    }
    const classified = classify(message);
    if (!classified) return;
    if (classified.kind === "request") return await this.#request(port, classified.message);
    if (classified.kind === "response") {
      // The session's answer to what the process asked it; only the session asked may answer.
      if (this.#inputs.answeredBy(port, classified.message.id)) await this.#send(message);
      return;
    }
    const notification = classified.message;
    if (notification.method === "notifications/cancelled") {
      const requestId = notification.params?.requestId as RequestId | undefined;
      const ours = requestId === undefined ? undefined : port.calls.get(idKey(requestId));
      if (ours === undefined) return;
      // The call is over for its session: an answer the process sends anyway is dropped, so it
      // can never be taken for a later request of the session's that reuses the id.
      this.#forgetCall(ours);
      await this.#send({ ...notification, params: { ...notification.params, requestId: ours } });
      return;
    }
    // Said once by the gateway; roots of one session are not the process's (see inputs).
    if (
      notification.method === "notifications/initialized" ||
      notification.method === "notifications/roots/list_changed"
    ) return;
    await this.#send(message);
  }

  async #request(port: ProcessPort, request: RpcRequest): Promise<void> {
    if (request.method === "initialize") return port.deliver(this.#welcome(port, request));
    if (this.options.everyone) {
      const refused = refusedForEveryone(request);
      if (refused) return port.deliver(refused);
      request = withoutTask(request);
    }
    if (request.method === "ping") {
      return port.deliver({ jsonrpc: "2.0", id: request.id, result: {} });
    }
    const { answer, subscribes } = this.#subscriptions.step(port, request);
    if (answer) return port.deliver(answer);
    const id = `gh-share-${++this.#next}`;
    const { request: sent, linkToken } = this.#progress.inbound(port.name, request);
    const call: Call = { port, id: request.id, method: request.method, linkToken, subscribes };
    beginCall(call, this.#calls.values());
    this.#calls.set(id, call);
    port.calls.set(idKey(request.id), id);
    await this.#send({ ...sent, id } as JSONRPCMessage);
  }

  /** The answer to a session's `initialize`: what the process declared, at the session's version. */
  #welcome(port: ProcessPort, request: RpcRequest): JSONRPCMessage {
    const declared = this.options.everyone
      ? declaredToEveryone(this.#declared ?? {})
      : this.#declared ?? {};
    const params = request.params ?? {};
    port.clientCapabilities = (params.capabilities as Record<string, unknown>) ?? {};
    const requested = params.protocolVersion;
    const spoken = String(declared.protocolVersion ?? LATEST_SESSION_PROTOCOL_VERSION);
    // The client's version when the gateway speaks it and the process is not older.
    const version = typeof requested === "string" && isSupportedProtocolVersion(requested) &&
        requested <= spoken
      ? requested
      : spoken;
    return { jsonrpc: "2.0", id: request.id, result: { ...declared, protocolVersion: version } };
  }

  #declared?: Record<string, unknown>;

  /** `port`'s session ended: its calls are cancelled, its subscriptions and questions dropped. */
  leave(port: ProcessPort): void {
    if (!this.#ports.delete(port)) return;
    for (const ours of [...port.calls.values()]) {
      this.#forgetCall(ours);
      this.#sendQuietly({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: ours, reason: "the client session ended" },
      });
    }
    port.calls.clear();
    for (const uri of this.#subscriptions.leave(port)) {
      const id = `gh-share-${++this.#next}`;
      this.#sendQuietly({ jsonrpc: "2.0", id, method: "resources/unsubscribe", params: { uri } });
    }
    this.#inputs.forget(port);
    if (this.#ports.size === 0 && !this.#ended) this.options.onEmpty();
  }

  /** Stops the process (idle, or the gateway stopping); sessions still on it end. */
  async stop(reason: string): Promise<void> {
    this.#lastError ??= reason;
    this.#end(reason);
    await this.options.transport.close();
  }

  #fromProcess(message: JSONRPCMessage): void {
    const classified = classify(message);
    if (!classified) return;
    if (classified.kind === "response") return this.#answered(classified.message);
    if (classified.kind === "request") {
      const takers = [...this.#calls.values()].filter((call) => takesInput(call.method));
      return this.#inputs.asked(classified.message, takers);
    }
    this.#notified(classified.message);
  }

  #answered(response: RpcResponse): void {
    if (response.id === INITIALIZE_ID) {
      if (response.result) this.#declared = response.result as Record<string, unknown>;
      return this.#initialized.resolve(response);
    }
    const call = this.#forgetCall(String(response.id));
    if (!call) return; // an unsubscribe of a session that left, a cancelled call's late answer
    if (call.subscribes !== undefined && response.error) {
      this.#subscriptions.unsubscribe(call.port, call.subscribes);
    }
    call.port.deliver({ ...response, id: call.id } as JSONRPCMessage, call.id);
  }

  #notified(notification: RpcNotification): void {
    const method = notification.method;
    if (method === "notifications/progress") {
      const back = this.#progress.outbound(notification);
      if (!back) return;
      const port = [...this.#ports].find((port) => port.name === back.caller);
      return port?.deliver(back.notification as JSONRPCMessage);
    }
    if (method === "notifications/resources/updated") {
      const subscribers = this.#subscriptions.of(notification.params?.uri);
      for (const port of subscribers) port.deliver(notification as JSONRPCMessage);
      return;
    }
    if (method === "notifications/cancelled") return this.#inputs.withdrawn(notification);
    if (method === "notifications/elicitation/complete") {
      return this.#inputs.completed(notification);
    }
    if (method.endsWith("/list_changed")) {
      for (const port of this.#ports) port.deliver(notification as JSONRPCMessage);
      return;
    }
    // A log line or anything else that names no session (shared_attribution.ts).
    const to = [...noticeTo(method, [...this.#calls.values()], this.#ports, this.options.everyone)];
    if (to.length === 0) this.options.onDropped?.(method);
    for (const port of to) port.deliver(notification as JSONRPCMessage);
  }

  /** Stops waiting for the process's answer to `ours`; returns the call if it waited. */
  #forgetCall(ours: string): Call | undefined {
    const call = this.#calls.get(ours);
    if (!call) return undefined;
    this.#calls.delete(ours);
    call.port.calls.delete(idKey(call.id));
    this.#progress.release(call.linkToken);
    return call;
  }

  #end(reason: string): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#initialized.resolve(
      errorResponse(INITIALIZE_ID, RpcErrorCode.backendError, reason) as RpcResponse,
    );
    const ports = [...this.#ports];
    this.#ports.clear();
    this.#calls.clear();
    for (const port of ports) port.ended(`the shared backend process ended (${reason})`);
    this.options.onEnded(reason);
  }

  #send(message: JSONRPCMessage): Promise<void> {
    return this.options.transport.send(message);
  }

  #sendQuietly(message: JSONRPCMessage): void {
    this.#send(message).catch((error) =>
      this.options.logger.debug("could not tell the shared process", { error })
    );
  }
}
