/**
 * Builds the backend connection for one client session from the server's configuration:
 * a child process for stdio, the SDK's client transports for HTTP backends. Only configured
 * headers reach an HTTP backend; nothing of the client's request (its token above all) does.
 */
import type { BackendServerConfig } from "../../config/types.ts";
import type { Logger } from "../../observability/logger.ts";
import { SSEClientTransport, StreamableHTTPClientTransport, type Transport } from "../../sdk.ts";
import { fillPlaceholders, fillRecord, type PlaceholderValues } from "./placeholders.ts";
import { LegacySseBackend } from "./legacy_sse.ts";
import { StdioBackend } from "./stdio.ts";
import { sseAnswersAsJson } from "./sse_answers.ts";

export interface BackendOptions {
  maxMessageBytes: number;
  killGraceMs: number;
  logger: Logger;
  /** How HTTP backends are reached (the gateway's kept-alive client); `fetch` by default. */
  fetch?: typeof globalThis.fetch;
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
      logger: options.logger,
    });
    const close = () => transport.close().catch(() => {});
    return { transport, close, detach: close };
  }
  const url = new URL(fillPlaceholders(server.url, user, encodeURIComponent));
  const requestInit: RequestInit = { headers: fillRecord(server.headers, user) };
  const baseFetch = options.fetch ?? globalThis.fetch;
  const fetch = token ? freshTokenFetch(server.headers, user, token, baseFetch) : baseFetch;
  if (server.transport === "sse") {
    const transport = new LegacySseBackend(new SSEClientTransport(url, { requestInit, fetch }));
    return { transport, close: () => transport.close(), detach: () => transport.close() };
  }
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit,
    fetch: sseAnswersAsJson(fetch),
    sessionId: resume?.sessionId,
  });
  if (resume) transport.setProtocolVersion(resume.protocolVersion);
  const detach = () => transport.close().catch(() => {});
  return {
    transport,
    close: async () => {
      if (transport.sessionId) await transport.terminateSession().catch(() => {});
      await detach();
    },
    detach,
    sharedSessionId: () => transport.sessionId,
  };
}

const TOKEN_PLACEHOLDER = /\{\{\s*user\.token\s*\}\}/;

/** A fetch that sets the token-bearing headers from the person's current token. */
function freshTokenFetch(
  headers: Record<string, string>,
  user: PlaceholderValues,
  token: TokenSource,
  baseFetch: typeof globalThis.fetch,
): typeof globalThis.fetch {
  const templated = Object.entries(headers).filter(([, text]) => TOKEN_PLACEHOLDER.test(text));
  return async (input, init) => {
    const current = await token();
    const merged = new Headers(init?.headers);
    for (const [name, text] of templated) {
      merged.set(name, fillPlaceholders(text, { ...user, "user.token": current }));
    }
    return await baseFetch(input, { ...init, headers: merged });
  };
}
