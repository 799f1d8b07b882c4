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
import type { ServerConfig } from "../config/types.ts";
import type { Principal } from "../core/principal.ts";
import type { JSONRPCMessage } from "../sdk.ts";
import { VERSION } from "../version.ts";
import {
  classify,
  errorResponse,
  type RequestId,
  RpcErrorCode,
  type RpcRequest,
  type RpcResponse,
} from "./jsonrpc.ts";
import { LATEST_SESSION_PROTOCOL_VERSION } from "./protocol_versions.ts";
import type { ClientChannel, Session } from "./session.ts";
import type { SessionRegistry } from "./sessions.ts";

/** What the backend told the gateway's own `initialize`. */
export type InitializeResult = Record<string, unknown>;

/** The session side of a link: answers routed back to the waiting call by the link's own ids. */
class LinkChannel implements ClientChannel {
  readonly #waiting = new Map<RequestId, (response: RpcResponse) => void>();
  #endedWith?: string;

  constructor(private readonly answerBackend: (message: JSONRPCMessage) => void) {}

  expect(id: RequestId): Promise<RpcResponse> {
    if (this.#endedWith !== undefined) return Promise.resolve(ended(id, this.#endedWith));
    return new Promise((resolve) => this.#waiting.set(id, resolve));
  }

  deliver(message: JSONRPCMessage): void {
    const classified = classify(message);
    if (!classified) return;
    if (classified.kind === "response") {
      const resolve = this.#waiting.get(classified.message.id);
      this.#waiting.delete(classified.message.id);
      resolve?.(classified.message);
    } else if (classified.kind === "request") {
      this.answerBackend(refuseServerRequest(classified.message));
    }
    // Notifications (progress, logs, list changes) have no stateless client to go to yet.
  }

  ended(reason: string): void {
    this.#endedWith = reason;
    for (const [id, resolve] of this.#waiting) resolve(ended(id, reason));
    this.#waiting.clear();
  }
}

/**
 * The backend's own requests (sampling, elicitation, roots) have no client to reach on a
 * link: the gateway declares no such capability on it, and answers any that come anyway.
 */
function refuseServerRequest(request: RpcRequest): JSONRPCMessage {
  if (request.method === "ping") return { jsonrpc: "2.0", id: request.id, result: {} };
  return errorResponse(
    request.id,
    RpcErrorCode.methodNotFound,
    `${request.method} cannot reach a client without a session (MCP 2026-07-28) through Gatehouse`,
  );
}

function ended(id: RequestId, reason: string): RpcResponse {
  return {
    jsonrpc: "2.0",
    id,
    error: { code: RpcErrorCode.backendError, message: `the backend link ended: ${reason}` },
  };
}

/** One person's initialized session with one backend, used for stateless requests. */
export class StatelessLink {
  #next = 0;

  constructor(
    private readonly session: Session,
    private readonly channel: LinkChannel,
    /** What the backend answered to the gateway's `initialize`. */
    readonly initializeResult: InitializeResult,
  ) {}

  get closed(): boolean {
    return this.session.closed;
  }

  onClosed(listener: () => void): void {
    this.session.onClose(() => listener());
  }

  /** Sends `request` under an id of the link's own; resolves with the answer under `request.id`. */
  async call(request: RpcRequest): Promise<RpcResponse> {
    const id = `gh-${++this.#next}`;
    const answer = this.channel.expect(id);
    await this.session.fromClient({ ...request, id } as JSONRPCMessage);
    return { ...await answer, id: request.id };
  }

  /** Sends a notification to the backend as it is. */
  async notify(message: JSONRPCMessage): Promise<void> {
    await this.session.fromClient(message);
  }
}

/** The links of this process, one per (person, server), opened on first use. */
export class StatelessLinks {
  readonly #links = new Map<string, Promise<StatelessLink>>();

  constructor(private readonly sessions: SessionRegistry) {}

  /**
   * The person's link to `server`, opening and initializing one if there is none (or the last
   * one ended). Throws what `SessionRegistry.open` throws: a session limit, a missing credential.
   */
  async linkFor(server: ServerConfig, principal: Principal): Promise<StatelessLink> {
    const key = `${principal.id}\n${server.name}`;
    const existing = this.#links.get(key);
    if (existing) {
      const link = await existing.catch(() => undefined);
      if (link && !link.closed) return link;
      if (this.#links.get(key) === existing) this.#links.delete(key);
    }
    const opening = this.#open(server, principal);
    this.#links.set(key, opening);
    opening.then(
      (link) => link.onClosed(() => this.#links.get(key) === opening && this.#links.delete(key)),
      () => this.#links.get(key) === opening && this.#links.delete(key),
    );
    return await opening;
  }

  async #open(server: ServerConfig, principal: Principal): Promise<StatelessLink> {
    const session = await this.sessions.open(server, principal);
    const channel = new LinkChannel((message) => void session.fromClient(message));
    session.attach(channel);
    const init = channel.expect("gh-initialize");
    await session.fromClient({
      jsonrpc: "2.0",
      id: "gh-initialize",
      method: "initialize",
      params: {
        protocolVersion: LATEST_SESSION_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: "gatehouse", version: VERSION },
      },
    } as JSONRPCMessage);
    const answer = await init;
    if (!answer.result || session.initializeFailure !== undefined) {
      const why = session.initializeFailure ?? answer.error?.message ?? "no answer";
      void session.close("the backend refused initialize");
      throw new Error(why);
    }
    await session.fromClient({ jsonrpc: "2.0", method: "notifications/initialized" });
    return new StatelessLink(session, channel, answer.result);
  }
}
