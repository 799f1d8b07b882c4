/** What a front transport needs to serve one request for one configured server. */
import type { ServerConfig } from "../../config/types.ts";
import { parseSessionId } from "../../core/ids.ts";
import type { Principal } from "../../core/principal.ts";
import type { Logger } from "../../observability/logger.ts";
import type { Session } from "../session.ts";
import type { SessionRegistry } from "../sessions.ts";

export interface FrontContext {
  server: ServerConfig;
  principal: Principal;
  sessions: SessionRegistry;
  maxMessageBytes: number;
  /** Path prefix of the public base URL ("" or "/gateway"), for URLs the gateway hands out. */
  basePath: string;
  logger: Logger;
}

/**
 * The session named by `rawId`, if it exists, belongs to this server and to this caller.
 * Someone else's session id is treated exactly like an unknown one.
 */
export function findOwnSession(ctx: FrontContext, rawId: string | null): Session | undefined {
  const id = parseSessionId(rawId);
  const session = id ? ctx.sessions.get(id) : undefined;
  if (!session || session.closed) return undefined;
  if (session.server.name !== ctx.server.name || session.principal.id !== ctx.principal.id) {
    return undefined;
  }
  return session;
}
