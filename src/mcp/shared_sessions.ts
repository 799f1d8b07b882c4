/**
 * Sessions other replicas can continue. A session whose backend speaks Streamable HTTP holds
 * nothing a replica cannot rebuild from a small record: the backend's session id, the
 * negotiated protocol version, who the client is and what it can do. With the record in shared
 * storage, a request that lands on another replica (a failover, a load balancer without
 * stickiness) continues the same backend session instead of failing with "session not found".
 *
 * One replica at a time owns a shared session: the last one that served it. Only the owner
 * ends the backend session when the session idles out; the others let go of their copy.
 */
import type { Principal } from "../core/principal.ts";

export interface SharedSessionRecord {
  server: string;
  principal: Principal;
  backendSessionId: string;
  protocolVersion: string;
  clientCapabilities: Record<string, unknown>;
  /** The replica that served the session last. */
  owner: string;
  /** Epoch ms; renewed while the session is in use. */
  expiresAt: number;
}

/** Where shared session records live (the gateway's storage). */
export interface SessionDirectory {
  find(id: string): Promise<SharedSessionRecord | undefined>;
  save(id: string, record: SharedSessionRecord): Promise<void>;
  remove(id: string): Promise<void>;
}

/** How often a replica serving a shared session checks that it still owns it. */
export const OWNERSHIP_CHECK_MS = 2_000;
