/**
 * Builds the backend connection for one client session from the server's configuration:
 * a child process for stdio, the SDK's client transports for HTTP backends. Only configured
 * headers reach an HTTP backend; nothing of the client's request (its token above all) does.
 */
import type { BackendServerConfig } from "../../config/types.ts";
import type { Secret } from "../../core/secret.ts";
import { type Clock, waitAtMost } from "../../core/clock.ts";
import type { Logger } from "../../observability/logger.ts";
import { maskingLogger, SecretMask } from "../../observability/mask.ts";
import {
  SSEClientTransport,
  StreamableHTTPClientTransport,
  StreamableHTTPError,
  type Transport,
} from "../../sdk.ts";
import { fillPlaceholders, fillRecord, type PlaceholderValues } from "./placeholders.ts";
import { LegacySseBackend } from "./legacy_sse.ts";
import { MaskedErrors } from "./masked_errors.ts";
import { StdioBackend } from "./stdio.ts";
import { sseAnswersAsJson } from "./sse_answers.ts";
import { type BoundedAnswerOptions, boundedAnswers } from "./bounded_answers.ts";
import { WithheldRoots } from "./withheld_roots.ts";

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
  /** True when `error` says the backend no longer knows this session (it was ended there). */
  sessionGone?(error: unknown): boolean;
}

/** An existing Streamable HTTP backend session to continue instead of starting one. */
export interface ResumeBackend {
  sessionId: string;
  protocolVersion: string;
}

/** The person's current service token, looked up again for each HTTP request. */
export type TokenSource = () => Promise<string>;

/** One person's credentials, as backends of their sessions see them. */
export interface PersonTokens {
  /** The current token for a server; throws `CredentialRequiredError` when there is none. */
  tokenFor(server: string): Promise<string>;
  /** Calls back when one of this person's credentials changes in this process. */
  watch(listener: (server: string) => void): () => void;
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
  return createBackend(server, { ...user, "user.token": await source() }, options, source, resume);
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
): Backend {
  const backend = createTransport(
    server,
    user,
    options,
    secretMask(server, user, options),
    token,
    resume,
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
    for (const value of Object.values(fillRecord(server.headers, user))) {
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
): Backend {
  if (server.transport === "stdio") {
    const transport = new StdioBackend({
      spec: {
        command: server.command,
        args: server.args.map((arg) => fillPlaceholders(arg, user)),
        env: fillRecord(server.env, user),
        cwd: server.cwd,
      },
      maxMessageBytes: options.maxMessageBytes,
      killGraceMs: options.killGraceMs,
      clock: options.clock,
      // Its stderr lines are logged: what it was given must not be.
      logger: maskingLogger(options.logger, mask),
      mask,
    });
    const close = () => transport.close().catch(() => {});
    return { transport, close, detach: close };
  }
  const url = new URL(fillPlaceholders(server.url, user, encodeURIComponent));
  const requestInit: RequestInit = { headers: fillRecord(server.headers, user) };
  const baseFetch = options.fetch ?? globalThis.fetch;
  const fetch = token ? freshTokenFetch(server.headers, user, token, baseFetch, mask) : baseFetch;
  // Every answer is held to limits.maxMessageBytes (bounded_answers.ts).
  const bounded = (oversizedEvents: BoundedAnswerOptions["oversizedEvents"]) =>
    boundedAnswers(fetch, {
      maxMessageBytes: options.maxMessageBytes,
      oversizedEvents,
      onOversized: (error) => options.logger.warn("backend answer too large", { error }),
    });
  if (server.transport === "sse") {
    // A legacy backend's one stream carries every answer: an event dropped from it would leave
    // a request waiting with no way to tell which, so the stream (and the session) ends.
    const sse = new SSEClientTransport(url, { requestInit, fetch: bounded("end") });
    const transport = new MaskedErrors(new LegacySseBackend(sse), mask);
    return { transport, close: () => transport.close(), detach: () => transport.close() };
  }
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit,
    fetch: sseAnswersAsJson(bounded("skip"), options.maxMessageBytes),
    sessionId: resume?.sessionId,
  });
  if (resume) transport.setProtocolVersion(resume.protocolVersion);
  const detach = () => transport.close().catch(() => {});
  return {
    transport: new MaskedErrors(transport, mask),
    close: async () => {
      // A backend that never answers the DELETE must not hold the session's place for ever:
      // after the grace the connection is dropped, and the DELETE with it.
      if (transport.sessionId) {
        await waitAtMost(options.clock, options.killGraceMs, transport.terminateSession());
      }
      await detach();
    },
    detach,
    sharedSessionId: () => transport.sessionId,
    // The spec's answer to a request for a session the server no longer has is 404.
    sessionGone: (error) =>
      transport.sessionId !== undefined && error instanceof StreamableHTTPError &&
      error.code === 404,
  };
}

const TOKEN_PLACEHOLDER = /\{\{\s*user\.token\s*\}\}/;

/**
 * A fetch that sets the token-bearing headers from the person's current token (and adds a
 * refreshed token to what is masked).
 */
function freshTokenFetch(
  headers: Record<string, string>,
  user: PlaceholderValues,
  token: TokenSource,
  baseFetch: typeof globalThis.fetch,
  mask: SecretMask,
): typeof globalThis.fetch {
  const templated = Object.entries(headers).filter(([, text]) => TOKEN_PLACEHOLDER.test(text));
  return async (input, init) => {
    const current = await token();
    mask.add(current);
    const merged = new Headers(init?.headers);
    for (const [name, text] of templated) {
      merged.set(name, fillPlaceholders(text, { ...user, "user.token": current }));
    }
    return await baseFetch(input, { ...init, headers: merged });
  };
}
