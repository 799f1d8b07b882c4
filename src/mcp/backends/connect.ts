/**
 * Builds the backend connection for one client session from the server's configuration:
 * a child process for stdio, the gateway's own transport for a Streamable HTTP backend
 * (legacy_http.ts), the SDK's for a legacy SSE one, each behind the switch that speaks the revision the backend does (`protocol:`, revision_switch.ts). Only
 * configured headers reach an HTTP backend; nothing of the client's request (its token above
 * all) does.
 */
import type { BackendServerConfig, HttpServerConfig } from "../../config/types.ts";
import { identityFetch, type IdentitySource } from "./identity_fetch.ts";
import type { Secret } from "../../core/secret.ts";
import { type Clock, waitAtMost } from "../../core/clock.ts";
import type { Logger } from "../../observability/logger.ts";
import { maskingLogger, SecretMask } from "../../observability/mask.ts";
import { SSEClientTransport, StreamableHTTPError, type Transport } from "../../sdk.ts";
import {
  fillPlaceholders,
  fillRecord,
  headerValues,
  type PlaceholderValues,
} from "./placeholders.ts";
import {
  freshTokenFetch,
  type TokenRefusal,
  type TokenRejected,
  type TokenSource,
} from "./token_fetch.ts";
import { LegacySseBackend } from "./legacy_sse.ts";
import { MaskedErrors } from "./masked_errors.ts";
import { StdioBackend } from "./stdio.ts";
import type { ProcessPool } from "./process_pool.ts";
import { type BoundedAnswerOptions, boundedAnswers } from "./bounded_answers.ts";
import { WithheldRoots } from "./withheld_roots.ts";
import { HttpWire } from "./modern_http.ts";
import { LegacyHttp } from "./legacy_http.ts";
import { PipeWire } from "./modern_wire.ts";
import { revisionKey, RevisionMemory } from "./revision_probe.ts";
import { RevisionSwitch, type RevisionSwitchOptions } from "./revision_switch.ts";

/** The request timeout when none is given: the default of `limits.requestTimeout`. */
const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

export interface BackendOptions {
  maxMessageBytes: number;
  killGraceMs: number;
  /** The gateway's time: how long a backend is given to end politely. */
  clock: Clock;
  logger: Logger;
  /** How HTTP backends are reached (the gateway's kept-alive client); `fetch` by default. */
  fetch?: typeof globalThis.fetch;
  /** The master secret and earlier ones: never in what is logged from a backend either. */
  gatewaySecrets?: Secret[];
  /**
   * `limits.requestTimeout`: asking a backend which revision it speaks takes at most half of
   * it, so a 2025 `initialize` still fits in the session's own time when the answer is silence.
   */
  requestTimeoutMs?: number;
  /** Which revision each backend speaks, once learned; the process's record by default. */
  revisions?: RevisionMemory;
  /**
   * The gateway's shared stdio processes (`share: person`, `share: all`); without it, every
   * stdio session starts its own process whatever `share:` says.
   */
  processes?: ProcessPool;
  /**
   * What an HTTP backend is told of the session's person (`identity:`), per server (an
   * aggregate's members each get their own); undefined when it is told nothing.
   */
  identity?(server: HttpServerConfig): IdentitySource | undefined;
}

/** A backend connection plus how to end it politely (HTTP backends get a DELETE). */
export interface Backend {
  transport: Transport;
  /** Ends the backend session; never throws. */
  close(): Promise<void>;
  /** Lets go of the connection but leaves the backend session to whoever continues it. */
  detach(): Promise<void>;
  /** A Streamable HTTP backend's session id, which another replica can continue. */
  sharedSessionId?(): string | undefined;
  /**
   * False when no other replica could continue this backend connection (a backend that speaks
   * 2026-07-28 has no session to continue: its calls carry the session's `_meta` from here).
   */
  continuable?(): boolean;
  /**
   * True once the backend is known to speak 2026-07-28: a 2026 client's requests then pass to
   * it as they are (passage.ts).
   */
  speaksModern?(): boolean;
  /** True when `error` says the backend no longer knows this session (it was ended there). */
  sessionGone?(error: unknown): boolean;
}

/** An existing Streamable HTTP backend session to continue instead of starting one. */
export interface ResumeBackend {
  sessionId: string;
  protocolVersion: string;
}

export type { TokenRefusal, TokenRejected, TokenSource } from "./token_fetch.ts";

/** One person's credentials, as backends of their sessions see them. */
export interface PersonTokens {
  /** The current token for a server; throws `CredentialRequiredError` when there is none. */
  tokenFor(server: string): Promise<string>;
  /** Calls back when one of this person's credentials changes in this process. */
  watch(listener: (server: string) => void): () => void;
  /** A server refused `token` (see `TokenRejected`). */
  rejected?(server: string, token: string, refusal: TokenRefusal): Promise<string | undefined>;
}

/**
 * A backend for this person: a server that acts as them gets their credential as
 * `{{user.token}}` (throwing `CredentialRequiredError` before anything starts without one).
 */
export async function connectBackend(
  server: BackendServerConfig,
  user: PlaceholderValues,
  options: BackendOptions,
  tokens?: PersonTokens,
  resume?: ResumeBackend,
): Promise<Backend> {
  if (!server.userToken || !tokens) return createBackend(server, user, options, undefined, resume);
  const source = () => tokens.tokenFor(server.name);
  // A remote MCP server says when it stops accepting a token (401) or wants more (403); a
  // backend refusing an exchanged token gets one newly issued.
  const refusable = server.userToken.kind === "mcp" || server.userToken.kind === "exchange";
  const rejected: TokenRejected | undefined = refusable && tokens.rejected
    ? (token, refusal) => tokens.rejected!(server.name, token, refusal)
    : undefined;
  return createBackend(
    server,
    { ...user, "user.token": await source() },
    options,
    source,
    resume,
    rejected,
  );
}

/**
 * `user` holds the values at session start; with `token`, the headers that carry
 * `{{user.token}}` are filled again on every request, so an HTTP backend always gets the
 * person's current token (refreshed, or refused once they delete it).
 */
export function createBackend(
  server: BackendServerConfig,
  user: PlaceholderValues,
  options: BackendOptions,
  token?: TokenSource,
  resume?: ResumeBackend,
  rejected?: TokenRejected,
): Backend {
  const backend = createTransport(
    server,
    user,
    options,
    secretMask(server, user, options),
    token,
    resume,
    rejected,
  );
  if (!server.forwardRoots) backend.transport = new WithheldRoots(backend.transport);
  return backend;
}

/**
 * What the gateway must never log from this backend: the person's token, the values the
 * configuration took from the environment, header values (and the credential after an
 * auth scheme), the master secrets.
 */
function secretMask(
  server: BackendServerConfig,
  user: PlaceholderValues,
  options: BackendOptions,
): SecretMask {
  const mask = new SecretMask([
    user["user.token"],
    ...server.secretValues.map((secret) => secret.reveal()),
    ...(options.gatewaySecrets ?? []).map((secret) => secret.reveal()),
  ]);
  if (server.transport !== "stdio") {
    for (const value of Object.values(fillRecord(server.headers, headerValues(user)))) {
      mask.add(value);
      mask.add(/^[A-Za-z][\w.~+/-]*\s+(\S+)$/.exec(value)?.[1]);
    }
  }
  return mask;
}

function createTransport(
  server: BackendServerConfig,
  user: PlaceholderValues,
  options: BackendOptions,
  mask: SecretMask,
  token?: TokenSource,
  resume?: ResumeBackend,
  rejected?: TokenRejected,
): Backend {
  if (server.transport === "stdio") {
    const args = server.args.map((arg) => fillPlaceholders(arg, user));
    const env = fillRecord(server.env, user);
    const child = (logger = options.logger, skipUnreadable = false) =>
      new StdioBackend({
        spec: { command: server.command, args, env, cwd: server.cwd },
        maxMessageBytes: options.maxMessageBytes,
        killGraceMs: options.killGraceMs,
        clock: options.clock,
        // Its stderr lines are logged: what it was given must not be.
        logger: maskingLogger(logger, mask),
        mask,
        skipUnreadable,
      });
    if (server.share !== "session" && options.processes) {
      // One process for the person (or everyone), which this session joins (process_pool.ts).
      const port = options.processes.join({
        server,
        person: user["user.id"],
        startedWith: JSON.stringify([args, env]),
        // Logged as the server's, not as this session's: the process outlives the session. A
        // line it cannot read fails only the call it answers: others' sessions go on.
        spawn: (logger) => child(logger, true),
        startTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      });
      return { transport: port, close: () => port.close(), detach: () => port.close() };
    }
    // Both revisions on the one child; a new one when asking ended the first.
    const transport = new RevisionSwitch(
      switchOptions(server, options, child, (pipe) => new PipeWire(pipe)),
    );
    const close = () => transport.close().catch(() => {});
    return { transport, close, detach: close, speaksModern: () => transport.speaksModern };
  }
  const url = new URL(fillPlaceholders(server.url, user, encodeURIComponent));
  const inHeaders = headerValues(user);
  const requestInit: RequestInit = { headers: fillRecord(server.headers, inHeaders) };
  const told = options.identity?.(server);
  const baseFetch = told
    ? identityFetch(options.fetch ?? globalThis.fetch, told)
    : options.fetch ?? globalThis.fetch;
  const fetch = token
    ? freshTokenFetch(server.headers, inHeaders, token, baseFetch, mask, rejected)
    : baseFetch;
  // Every answer is held to limits.maxMessageBytes (bounded_answers.ts).
  const bounded = (oversizedEvents: BoundedAnswerOptions["oversizedEvents"]) =>
    boundedAnswers(fetch, {
      maxMessageBytes: options.maxMessageBytes,
      oversizedEvents,
      onOversized: (error) => options.logger.warn("backend answer too large", { error }),
    });
  if (server.transport === "sse") {
    // A legacy backend's one stream carries every answer: an event dropped from it is placed
    // by its id, and its request gets the size error; the stream and the session go on.
    const sse = new SSEClientTransport(url, { requestInit, fetch: bounded("answer") });
    const transport = new MaskedErrors(new LegacySseBackend(sse), mask);
    return { transport, close: () => transport.close(), detach: () => transport.close() };
  }
  const http = new LegacyHttp({
    url,
    headers: requestInit.headers as Record<string, string>,
    fetch,
    mask,
    clock: options.clock,
    // Held to the limit as every answer is (bounded_answers.ts), by the transport itself.
    maxMessageBytes: options.maxMessageBytes,
    onOversized: (error) => options.logger.warn("backend answer too large", { error }),
    sessionId: resume?.sessionId,
    protocolVersion: resume?.protocolVersion,
  });
  const legacy = new MaskedErrors(http, mask);
  // A backend session being continued is a 2025 one: there is nothing to decide.
  const transport = resume ? legacy : new RevisionSwitch(
    switchOptions(server, options, () => legacy, () =>
      new HttpWire({
        url,
        headers: requestInit.headers as Record<string, string>,
        fetch: bounded("skip"),
        mask,
      })),
  );
  const detach = () => transport.close().catch(() => {});
  return {
    transport,
    close: async () => {
      // A backend that never answers the DELETE must not hold the session's place for ever:
      // after the grace the connection is dropped, and the DELETE with it.
      if (http.sessionId) {
        await waitAtMost(options.clock, options.killGraceMs, http.terminateSession());
      }
      await detach();
    },
    detach,
    sharedSessionId: () => http.sessionId,
    continuable: () => !(transport instanceof RevisionSwitch && transport.speaksModern),
    speaksModern: () => transport instanceof RevisionSwitch && transport.speaksModern,
    // The spec's answer to a request for a session the server no longer has is 404.
    sessionGone: (error) =>
      http.sessionId !== undefined && error instanceof StreamableHTTPError && error.code === 404,
  };
}

/** The revision switch of one session's backend (revision_switch.ts). */
function switchOptions(
  server: BackendServerConfig,
  options: BackendOptions,
  legacy: RevisionSwitchOptions["legacy"],
  modern: RevisionSwitchOptions["modern"],
): RevisionSwitchOptions {
  return {
    server: server.name,
    protocol: server.protocol,
    // Without the gateway's memory (a library caller), each connection asks afresh.
    memory: options.revisions ?? new RevisionMemory(),
    key: revisionKey(server),
    clock: options.clock,
    logger: options.logger,
    timeoutMs: (options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS) / 2,
    legacy,
    modern,
  };
}
