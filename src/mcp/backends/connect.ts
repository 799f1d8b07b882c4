/**
 * Builds the backend connection for one client session from the server's configuration:
 * a child process for stdio, the SDK's client transports for HTTP backends. Only configured
 * headers reach an HTTP backend; nothing of the client's request (its token above all) does.
 */
import type { BackendServerConfig } from "../../config/types.ts";
import type { Logger } from "../../observability/logger.ts";
import { SSEClientTransport, StreamableHTTPClientTransport, type Transport } from "../../sdk.ts";
import { fillPlaceholders, fillRecord, type PlaceholderValues } from "./placeholders.ts";
import { StdioBackend } from "./stdio.ts";

export interface BackendOptions {
  maxMessageBytes: number;
  killGraceMs: number;
  logger: Logger;
}

/** A backend connection plus how to end it politely (HTTP backends get a DELETE). */
export interface Backend {
  transport: Transport;
  /** Ends the backend session; never throws. */
  close(): Promise<void>;
}

export function createBackend(
  server: BackendServerConfig,
  user: PlaceholderValues,
  options: BackendOptions,
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
    return { transport, close: () => transport.close().catch(() => {}) };
  }
  const url = new URL(fillPlaceholders(server.url, user, encodeURIComponent));
  const requestInit: RequestInit = { headers: fillRecord(server.headers, user) };
  if (server.transport === "sse") {
    const transport = new SSEClientTransport(url, { requestInit });
    return { transport, close: () => transport.close().catch(() => {}) };
  }
  const transport = new StreamableHTTPClientTransport(url, { requestInit });
  return {
    transport,
    close: async () => {
      if (transport.sessionId) await transport.terminateSession().catch(() => {});
      await transport.close().catch(() => {});
    },
  };
}
