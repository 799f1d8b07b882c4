/**
 * A Streamable HTTP backend that speaks MCP 2025-11-25, as the gateway's session uses it: each
 * message is POSTed with headers worked out once per change (not once per call); a JSON answer
 * is checked for shape (`classify`) and passed on as it is; an SSE answer passes on every
 * message in order (progress, log messages, the server's own requests such as elicitation),
 * each held to `limits.maxMessageBytes`. It does what the SDK's `StreamableHTTPClientTransport`
 * did for the gateway, without its per-call `Headers`, schema validation and stream pipelines
 * (with the fetch wrappers they needed, a fifth of the gateway's CPU per call in bench scenario
 * 1). SSE answers are read by legacy_http_streams.ts.
 *
 * - The session id the backend gives is sent back on every request, the agreed protocol
 *   version once `setProtocolVersion` says it; `terminateSession` DELETEs the session.
 * - Refusals (any status outside 2xx) are `StreamableHTTPError`s carrying the status and the
 *   backend's words, as the SDK's were: revision_probe.ts reads a 2026 backend's -32022 in
 *   them, connect.ts a 404 (the backend no longer knows the session).
 * - After `notifications/initialized`, a GET stream carries what the server sends unasked;
 *   it is reopened when it ends, resuming after the last event id (legacy_http_listen.ts).
 * - Redirects are followed within the backend's origin, as the SDK did.
 *
 * Not done, as the gateway never asked the SDK for them: an `authProvider` (the gateway sends
 * configured headers), `send` options (resumption tokens the caller keeps). As with the SDK, a
 * session continued from another replica opens no GET stream (no `notifications/initialized`
 * passes here for it).
 */
import type { Clock } from "../../core/clock.ts";
import { headerOf } from "../../net/http1_response.ts";
import type { SecretMask } from "../../observability/mask.ts";
import { type JSONRPCMessage, StreamableHTTPError, type Transport } from "../../sdk.ts";
import { classify, idKey, type RequestId, whyNotJsonRpc } from "../protocol/jsonrpc.ts";
import {
  type AnswerLimits,
  BackendAnswerError,
  discard,
  MAX_REDIRECTS,
  mediaType,
  readWhole,
  redirectWithinOrigin,
  unfollowedRedirect,
} from "./legacy_http_answers.ts";
import type { Awaiting, Reconnection } from "./legacy_http_listen.ts";
import { EventStreams } from "./legacy_http_streams.ts";

export interface LegacyHttpOptions extends AnswerLimits {
  url: URL;
  /** The configured headers, placeholders filled (a fresh token comes through `fetch`). */
  headers: Record<string, string>;
  /** The gateway's HTTP client (or one that sets the person's current token first). */
  fetch: typeof globalThis.fetch;
  /** What never appears in words the gateway makes from a backend's failure. */
  mask: SecretMask;
  clock: Clock;
  /** A backend session to continue (another replica started it): its id and version. */
  sessionId?: string;
  protocolVersion?: string;
  /** How the GET stream is reopened; the SDK's defaults. */
  reconnection?: Partial<Reconnection>;
}

const POST_ACCEPT = "application/json, text/event-stream";

export class LegacyHttp implements Transport {
  onmessage?: Transport["onmessage"];
  onerror?: Transport["onerror"];
  onclose?: Transport["onclose"];
  readonly #options: LegacyHttpOptions;
  readonly #abort = new AbortController();
  readonly #streams: EventStreams;
  /** The configured headers, names in lower case: they win over the transport's own. */
  readonly #configured: Record<string, string> = {};
  #sessionId?: string;
  #protocolVersion?: string;
  #postHeaders!: Readonly<Record<string, string>>;
  #plainHeaders!: Readonly<Record<string, string>>;
  #started = false;
  #closed = false;

  constructor(options: LegacyHttpOptions) {
    this.#options = options;
    for (const name in options.headers) {
      this.#configured[name.toLowerCase()] = options.headers[name];
    }
    this.#sessionId = options.sessionId;
    this.#protocolVersion = options.protocolVersion;
    this.#rebuild();
    this.#streams = new EventStreams({
      clock: options.clock,
      reconnection: options.reconnection,
      open: (lastEventId) => this.#openStream(lastEventId),
      limits: options,
      mask: options.mask,
      deliver: (message) => this.onmessage?.(message),
      report: (error) => this.onerror?.(error),
      closed: () => this.#closed,
    });
  }

  get sessionId(): string | undefined {
    return this.#sessionId;
  }

  setProtocolVersion(version: string): void {
    if (version === this.#protocolVersion) return;
    this.#protocolVersion = version;
    this.#rebuild();
  }

  start(): Promise<void> {
    if (this.#started) return Promise.reject(new Error("the backend transport was started twice"));
    this.#started = true;
    return Promise.resolve();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    try {
      const response = await this.#request("POST", this.#postHeaders, JSON.stringify(message));
      const sessionId = headerOf(response, "mcp-session-id");
      if (sessionId && sessionId !== this.#sessionId) {
        this.#sessionId = sessionId;
        this.#rebuild();
      }
      if (!response.ok) throw await this.#refusal(response, "Error POSTing to endpoint");
      if (response.status === 202) {
        await discard(response);
        // The session is ready: what the server sends unasked comes on a stream of its own.
        if ((message as { method?: string }).method === "notifications/initialized") {
          this.#streams.listen();
        }
        return;
      }
      if (!asks(message)) return await discard(response);
      const type = mediaType(response);
      if (type === "application/json") {
        return this.#deliver(await readWhole(response, this.#options));
      }
      if (type === "text/event-stream") {
        return await this.#streams.answered(response, awaited(message));
      }
      await discard(response);
      const given = headerOf(response, "content-type");
      throw new StreamableHTTPError(-1, `Unexpected content type: ${given}`);
    } catch (error) {
      this.onerror?.(error as Error);
      throw error;
    }
  }

  /** Ends the backend session (DELETE); a backend that keeps its sessions may answer 405. */
  async terminateSession(): Promise<void> {
    if (!this.#sessionId) return;
    try {
      const response = await this.#request("DELETE", this.#plainHeaders);
      await discard(response);
      if (!response.ok && response.status !== 405) {
        throw await this.#refusal(response, "Failed to terminate session", response.statusText);
      }
      this.#sessionId = undefined;
      this.#rebuild();
    } catch (error) {
      this.onerror?.(error as Error);
      throw error;
    }
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    this.#streams.stop();
    this.#abort.abort();
    this.onclose?.();
    return Promise.resolve();
  }

  /** The headers of each kind of request, made again only when what goes in them changes. */
  #rebuild(): void {
    const plain: Record<string, string> = {};
    if (this.#sessionId) plain["mcp-session-id"] = this.#sessionId;
    if (this.#protocolVersion) plain["mcp-protocol-version"] = this.#protocolVersion;
    Object.assign(plain, this.#configured);
    // Frozen: the HTTP client checks and writes out a frozen record once (http1_wire.ts).
    this.#plainHeaders = Object.freeze(plain);
    this.#postHeaders = Object.freeze({
      ...plain,
      "content-type": "application/json",
      accept: POST_ACCEPT,
    });
  }

  /** One request, following redirects within the backend's origin. */
  async #request(method: string, headers: Record<string, string>, body?: string) {
    // Deno's fetch (a backend reached through a proxy) must not follow redirects by itself.
    const init: RequestInit = {
      method,
      headers,
      body,
      signal: this.#abort.signal,
      redirect: "manual",
    };
    let url = this.#options.url;
    let response = await this.#options.fetch(url, init);
    for (
      let hop = 0;
      hop < MAX_REDIRECTS && response.status >= 300 && response.status < 400;
      hop++
    ) {
      const target = redirectWithinOrigin(response, url, method);
      if (!target) break;
      await discard(response);
      url = target;
      response = await this.#options.fetch(url, init);
    }
    return response;
  }

  /**
   * A refusal as the SDK worded it: the backend's own words (JSON-RPC, often) after `what`; its
   * status when it said nothing (a server refusing the request's headers as too large, 431).
   */
  async #refusal(response: Response, what: string, words?: string): Promise<StreamableHTTPError> {
    const redirect = unfollowedRedirect(response, this.#options.url);
    if (redirect) await discard(response);
    const text = redirect ?? words ??
      await readWhole(response, this.#options).catch(() => null);
    const said = text || `HTTP ${response.status} ${response.statusText}`.trimEnd();
    return new StreamableHTTPError(response.status, `${what}: ${said}`);
  }

  /** The GET stream, resuming after `lastEventId`: the answer when it is open, else a refusal. */
  async #openStream(lastEventId: string | undefined): Promise<Response | undefined> {
    const headers: Record<string, string> = { ...this.#plainHeaders, accept: "text/event-stream" };
    if (lastEventId) headers["last-event-id"] = lastEventId;
    const response = await this.#request("GET", headers);
    if (response.ok) return response;
    await discard(response);
    // The server offers no stream (the spec's answer): nothing to listen to, nothing wrong.
    if (response.status === 405) return undefined;
    const redirect = unfollowedRedirect(response, this.#options.url);
    throw new StreamableHTTPError(
      response.status,
      `Failed to open SSE stream: ${redirect ?? response.statusText}`,
    );
  }

  /** A JSON answer: one message or a batch, each checked for shape before any is passed on. */
  #deliver(text: string): void {
    const value: unknown = JSON.parse(text);
    const messages = Array.isArray(value) ? value : [value];
    for (const message of messages) {
      if (!classify(message)) {
        throw new BackendAnswerError(
          `the backend's answer is not JSON-RPC 2.0: ${whyNotJsonRpc(message)}`,
        );
      }
    }
    for (const message of messages) this.onmessage?.(message as JSONRPCMessage);
  }
}

type Posted = JSONRPCMessage | JSONRPCMessage[];

function isRequest(message: unknown): message is { id: RequestId; method: string } {
  const m = message as { id?: unknown; method?: unknown };
  return m.method !== undefined && m.id !== undefined;
}

/** Whether a POSTed message (a batch, maybe) holds a request, which an answer must respond to. */
function asks(message: Posted): boolean {
  return Array.isArray(message) ? message.some(isRequest) : isRequest(message);
}

/** The requests in a POSTed message, by `idKey`. */
function awaited(message: Posted): Awaiting {
  const awaiting: Awaiting = new Map();
  for (const m of Array.isArray(message) ? message : [message]) {
    if (isRequest(m)) awaiting.set(idKey(m.id), m.id);
  }
  return awaiting;
}
