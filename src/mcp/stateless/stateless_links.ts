/**
 * Backend links for clients without sessions (MCP 2026-07-28). A 2026 client sends each
 * request on its own; a backend that speaks 2025-11-25 needs a session, and a stdio backend is
 * never shared between people. So the gateway keeps one link per (person, server): a session
 * it opened and initialized itself, reused across that person's requests, and ended by the
 * registry's idle reaping like any session (it counts against `limits.sessionsPerUser`).
 *
 * Requests of several clients of one person share the link; each gets an id of the gateway's
 * own on it, so two clients that both number their requests from 1 never collide.
 */
import type { ServerConfig } from "../../config/types.ts";
import type { Clock } from "../../core/clock.ts";
import { type Principal, statedOf } from "../../core/principal.ts";
import type { JSONRPCMessage } from "../../sdk.ts";
import { VERSION } from "../../version.ts";
import { type RpcNotification, type RpcRequest, type RpcResponse } from "../protocol/jsonrpc.ts";
import {
  LATEST_SESSION_PROTOCOL_VERSION,
  LOG_LEVELS,
  type LogLevel,
  takesInput,
} from "../protocol/protocol_versions.ts";
import type { Session } from "../sessions/session.ts";
import { SessionLimitError, type SessionRegistry } from "../sessions/sessions.ts";
import { type WaitingInput, WaitingInputs } from "./stateless_inputs.ts";
import { ListenLedger } from "./stateless_listens.ts";
import { answerOf, ended, LinkCall, LinkChannel, progressTokenOf } from "./link_calls.ts";
import { passAsItIs } from "../backends/passage.ts";
import { LinkToolMarks } from "./link_tool_marks.ts";
import { UI_CLIENT_EXTENSIONS } from "../protocol/mcp_apps.ts";

export { type CallStep, LinkCall } from "./link_calls.ts";

/** A call of this process waiting for its client's input, on the link it runs on. */
export type HeldInput = WaitingInput<StatelessLink>;

/** What the backend told the gateway's own `initialize`. */
export type InitializeResult = Record<string, unknown>;

/** One person's initialized session with one backend, used for stateless requests. */
export class StatelessLink {
  #next = 0;
  /** A call that may take input holds the link's one input slot from its start to its answer. */
  #inputClaimed = false;

  constructor(
    private readonly session: Session,
    private readonly channel: LinkChannel,
    private readonly clock: Clock,
    /** What the backend answered to the gateway's `initialize`. */
    readonly initializeResult: InitializeResult,
  ) {
    this.passes = session.backendSpeaksModern;
  }

  get closed(): boolean {
    return this.session.closed;
  }

  /**
   * True when the backend speaks 2026-07-28 too: requests then pass to it as their client sent
   * them (`passAsItIs`), and nothing asked of the client needs attributing to a call. Settled
   * by the link's initialize, so read once: every request asks.
   */
  readonly passes: boolean;

  /** The `Mcp-Param-*` marks of the backend's tools (link_tool_marks.ts). */
  readonly toolMarks = new LinkToolMarks((cursor) =>
    this.call({
      jsonrpc: "2.0",
      id: `gh-tools-${++this.#next}`,
      method: "tools/list",
      params: cursor === undefined ? {} : { cursor },
    }, false)
  );

  onClosed(listener: () => void): void {
    this.session.onClose(() => listener());
  }

  /**
   * Takes the link's input slot if it is free. A backend request for input is attributed to
   * the one call holding it, so a link carries one such call at a time, and a second one goes
   * to another link of the person's.
   */
  claimInput(): boolean {
    if (this.#inputClaimed || this.closed) return false;
    this.#inputClaimed = true;
    return true;
  }

  /**
   * Sends `request` under an id of the link's own; the call says what came of it. On a link
   * that `passes`, the request goes to the backend as it is. `onNotification` gets the call's
   * progress, and its logs from `logLevel` up (link_calls.ts says when a log is the call's).
   * `from` is the client's address, for the audit.
   */
  async start(
    request: RpcRequest,
    onNotification?: (notification: RpcNotification) => void,
    logLevel?: LogLevel,
    asItIs = this.passes,
    from?: string,
  ): Promise<LinkCall> {
    const id = `gh-${++this.#next}`;
    const call = new LinkCall(
      id,
      !asItIs && takesInput(request.method),
      (message) => this.toBackend(message),
      this.clock,
    );
    if (call.takesInput) call.settled.then(() => this.#inputClaimed = false);
    const sent = { ...request, id };
    const token = progressTokenOf(request);
    if (onNotification && token !== undefined) {
      // Clients number their progress tokens as they like; on a shared link the call's own id
      // stands in for the token, and the client's is put back on the way out.
      const params = request.params ?? {};
      sent.params = { ...params, _meta: { ...params._meta as object, progressToken: id } };
    }
    if (onNotification) {
      call.logLevel = logLevel;
      call.onNotification = (notification) =>
        onNotification(
          notification.method === "notifications/progress"
            ? { ...notification, params: { ...notification.params, progressToken: token } }
            : notification,
        );
    }
    if (logLevel !== undefined && !asItIs) await this.#logFrom(logLevel);
    this.channel.track(call);
    await this.session.fromClient((asItIs ? passAsItIs(sent) : sent) as JSONRPCMessage, from);
    return call;
  }

  /**
   * Sends `request` and waits for its answer, under `request.id`; for calls taking no input.
   * `asItIs` false sends a request of the gateway's own, without a 2026 envelope.
   */
  async call(request: RpcRequest, asItIs = this.passes, from?: string): Promise<RpcResponse> {
    const call = await this.start(request, undefined, undefined, asItIs, from);
    const step = await call.next();
    const response = await answerOf(call, step);
    if (request.method === "tools/list") this.toolMarks.heard(response);
    return { ...response, id: request.id };
  }

  /** The least severe level the backend was asked to log at (`logging/setLevel`), if any. */
  #backendLevel?: LogLevel;

  /**
   * Asks a 2025 backend that logs to log from `level` up, when it was asked for less so far:
   * one level for the whole link (each call filters its own), lowered as callers ask.
   */
  async #logFrom(level: LogLevel): Promise<void> {
    const capabilities = this.initializeResult.capabilities as Record<string, unknown> | undefined;
    if (!capabilities?.logging) return;
    const current = this.#backendLevel;
    if (current !== undefined && LOG_LEVELS.indexOf(current) <= LOG_LEVELS.indexOf(level)) return;
    this.#backendLevel = level;
    const id = `gh-level-${++this.#next}`;
    await this.call({ jsonrpc: "2.0", id, method: "logging/setLevel", params: { level } });
  }

  readonly #subscriptions = new Map<string, number>();

  /** Counts listens wanting updates of `uri` on this link (`change` ±1); returns the count. */
  subscribed(uri: string, change: 1 | -1): number {
    const count = Math.max(0, (this.#subscriptions.get(uri) ?? 0) + change);
    if (count === 0) this.#subscriptions.delete(uri);
    else this.#subscriptions.set(uri, count);
    return count;
  }

  /** Keeps the link from being reaped as idle until `until` settles (a listen stream). */
  hold(until: Promise<unknown>): void {
    void this.session.activity.holdStream(until);
  }

  /** A message for the backend as it is (answers to its requests, notifications). */
  async toBackend(message: JSONRPCMessage): Promise<void> {
    await this.session.fromClient(message);
  }
}

/** The links of this process, one per (person, server), opened on first use. */
export class StatelessLinks {
  /** Links whose opening has settled, by the promise the pools hold. */
  readonly #opened = new WeakMap<Promise<StatelessLink>, StatelessLink>();
  /** The person's links to a server, by `person\nserver`. */
  readonly #pools = new Map<string, Set<Promise<StatelessLink>>>();

  /** Calls waiting for their client's input, by the reference their requestState carries. */
  readonly waiting: WaitingInputs<StatelessLink>;
  /** Listen streams, by `person\nserver`: what the person's links hear unasked goes there. */
  readonly #listeners = new Map<string, Set<(notification: RpcNotification) => void>>();

  /**
   * Whether a server's links are per client as well as per person: its backend (or an
   * aggregate's member) is told which client calls. Set by the gateway for its configuration.
   */
  perClient: (server: ServerConfig) => boolean = toldWhichClient;

  constructor(
    private readonly sessions: SessionRegistry,
    private readonly clock: Clock,
    /** Keys that seal requestState: the current one first, then earlier ones still accepted. */
    readonly stateKeys: CryptoKey[],
    inputTtlMs: number,
    /** Whether a grant is revoked, as this replica knows it (no storage read). */
    isRevoked?: (grantId: string) => boolean,
  ) {
    this.waiting = new WaitingInputs<StatelessLink>(clock, inputTtlMs);
    this.listens = new ListenLedger(isRevoked);
  }

  /** The open listens' grants and the URIs they watch (stateless_listens.ts). */
  readonly listens: ListenLedger;

  /**
   * A link of the person's to `server`: with `forInput`, one whose input slot this call now
   * holds (see StatelessLink.claimInput). Opens and initializes another link when none fits.
   * Throws what `SessionRegistry.open` throws: a session limit, a missing credential.
   */
  async linkFor(
    server: ServerConfig,
    principal: Principal,
    forInput = false,
  ): Promise<StatelessLink> {
    const key = personAndServer(principal, server, this.perClient);
    let pool = this.#pools.get(key);
    if (!pool) this.#pools.set(key, pool = new Set());
    // The usual case first, without a copy of the pool or a turn of the event loop: an open
    // link that takes the request. Links still opening are left to the full search below.
    for (const entry of pool) {
      const link = this.#opened.get(entry);
      if (link && !link.closed && (!forInput || link.passes || link.claimInput())) return link;
    }
    for (const entry of [...pool]) {
      // An open link is taken as it is: no await (and no turn of the event loop) per request.
      const link = this.#opened.get(entry) ?? await entry.catch(() => undefined);
      if (!link || link.closed) {
        pool.delete(entry);
        continue;
      }
      if (!forInput || link.passes || link.claimInput()) return link;
    }
    const opening = this.#open(server, principal);
    pool.add(opening);
    const forget = () => {
      pool.delete(opening);
      if (pool.size === 0 && this.#pools.get(key) === pool) this.#pools.delete(key);
    };
    opening.then((link) => {
      this.#opened.set(opening, link);
      link.onClosed(forget);
    }, forget);
    let link: StatelessLink;
    try {
      link = await opening;
    } catch (error) {
      if (!forInput || !(error instanceof SessionLimitError)) throw error;
      // At the person's session limit an input call shares a busy link rather than fail: a
      // request for input there that cannot be attributed is refused to the backend.
      for (const entry of [...pool]) {
        const other = await entry.catch(() => undefined);
        if (other && !other.closed) return other;
      }
      throw error;
    }
    if (forInput && !link.passes && !link.claimInput()) {
      return await this.linkFor(server, principal, forInput);
    }
    return link;
  }

  /**
   * Hands the person's notifications from `server` (list changes, resource updates) to
   * `listener` until the returned function is called.
   */
  listen(
    server: ServerConfig,
    principal: Principal,
    listener: (notification: RpcNotification) => void,
  ): () => void {
    const key = personAndServer(principal, server, this.perClient);
    let listeners = this.#listeners.get(key);
    if (!listeners) this.#listeners.set(key, listeners = new Set());
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.#listeners.get(key) === listeners) {
        this.#listeners.delete(key);
      }
    };
  }

  async #open(server: ServerConfig, principal: Principal): Promise<StatelessLink> {
    const session = await this.sessions.open(server, principal);
    const key = personAndServer(principal, server, this.perClient);
    let link: StatelessLink | undefined;
    const channel = new LinkChannel(
      (message) => void session.fromClient(message),
      (notification) => {
        if (notification.method === "notifications/tools/list_changed") link?.toolMarks.forget();
        for (const listener of this.#listeners.get(key) ?? []) listener(notification);
      },
    );
    session.attach(channel);
    const toBackend = (message: JSONRPCMessage) => session.fromClient(message);
    const init = new LinkCall("gh-initialize", false, toBackend, this.clock);
    channel.track(init);
    await session.fromClient({
      jsonrpc: "2.0",
      id: "gh-initialize",
      method: "initialize",
      params: {
        protocolVersion: LATEST_SESSION_PROTOCOL_VERSION,
        // What a 2026 client may be asked through input_required; each request's own
        // capabilities decide, when the backend asks, whether its client is asked.
        // MCP Apps' UIs too: a server that shows UIs only to hosts that render them does.
        capabilities: {
          elicitation: { form: {}, url: {} },
          sampling: {},
          roots: {},
          extensions: UI_CLIENT_EXTENSIONS,
        },
        clientInfo: { name: "gatehouse", version: VERSION },
      },
    } as JSONRPCMessage);
    const step = await init.next();
    const answer = step.kind === "response" ? step.response : ended(init.id, "no answer");
    if (!answer.result || session.initializeFailure !== undefined) {
      const why = session.initializeFailure ?? answer.error?.message ?? "no answer";
      void session.close("the backend refused initialize");
      throw new Error(why);
    }
    await session.fromClient({ jsonrpc: "2.0", method: "notifications/initialized" });
    return link = new StatelessLink(session, channel, this.clock, answer.result);
  }
}

/** What the pools and listeners are kept by: one person's links to one server, per groups. */
function personAndServer(
  principal: Principal,
  server: ServerConfig,
  perClient: (server: ServerConfig) => boolean,
): string {
  // The groups too: a link's session checks tools against the groups it was opened with, and
  // two tokens of one person may carry different ones (signed in before and after a change).
  // All of them, not only those rules name, and the email: its backend was told them
  // (`{{user.groups}}`, `{{user.email}}`, the identity headers and assertion), and a link kept
  // with groups the person lost, or an email they no longer have, still says so.
  const key = `${principal.id}\n${server.name}\n${statedOf(principal)}`;
  // A backend told who calls (`identity:`) is told the client too: each client its own link.
  return perClient(server) ? `${key}\n\0client\n${principal.clientId ?? ""}` : key;
}

/** Whether a server's backend is told which client calls (`identity:`); members are not known. */
function toldWhichClient(server: ServerConfig): boolean {
  return server.transport !== "stdio" && server.transport !== "aggregate" &&
    (server.identity.headers || server.identity.assertion);
}
