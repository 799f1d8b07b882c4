/**
 * What the console reads and does, as narrow interfaces: the composition root (app_console.ts)
 * implements them over the session registry, the metrics window, grants, credentials, the tool
 * ledger and the policies; the pages know only these shapes. Actions are the very functions the
 * operator CLIs call (`gatehouse grants revoke`, `gatehouse tools approve --digest`), so they
 * take effect on every replica through the storage.
 */
import type { LastFailure, MinuteReading } from "../../observability/call_window.ts";
import type { RecentEvents } from "../../observability/recent_events.ts";
import type { GrantView } from "../../oauth/grant_admin.ts";

export type { GrantView };

export interface GatewayFacts {
  version: string;
  startedAt: number;
  /** This replica's name (replicaId, else the generated instance name). */
  replica: string;
  /** Replicas that renewed a shared session lately, this one included. */
  replicas: number;
  /** "off", or how certificates come and when the current one expires. */
  tls: string;
  storage: string;
}

export interface ServerRow {
  name: string;
  /** stdio, streamable-http, sse, aggregate (with its members). */
  transport: string;
  members?: string[];
  /** stdio `share:` mode. */
  share?: string;
  /** The revision the backend speaks, as configured or learned ("auto" until learned). */
  revision: string;
  sessions: number;
  processes: number;
}

export interface SessionRow {
  id: string;
  /** The person's user id (what their credentials are kept under). */
  user: string;
  email?: string;
  server: string;
  client?: string;
  revision: string;
  startedAt?: number;
  lastUsedAt: number;
  groups: readonly string[];
}

export interface ConnectionRow {
  server: string;
  kind: "oauth" | "mcp" | "manual";
  state: "connected" | "reconnect" | "missing";
  updatedAt?: number;
  scopes?: string;
  expiresAt?: number;
  reason?: string;
}

/** What a server's `access:` says about one person, and the rule that says it. */
export interface AccessRow {
  server: string;
  allowed: boolean;
  rule: string;
}

/** A tool's record as the Tools page shows it (a copy of the ledger's). */
export interface ToolRow {
  server: string;
  tool: string;
  approved?: { digest: string; definition?: unknown; at: number; by: string };
  held?: {
    digest: string;
    definition?: unknown;
    at: number;
    changes: string[];
    refused?: { at: number; by: string };
  };
}

export interface PinRow {
  server: string;
  tool: string;
  digest: string;
}

export interface ConsoleSources {
  facts(): Promise<GatewayFacts>;
  servers(): ServerRow[];
  /** The last hour of calls, a minute at a time. */
  series(server: string): MinuteReading[];
  lastFailure(server: string): LastFailure | undefined;
  lastCall(server: string): number | undefined;
  /** This replica's sessions, of everyone or of the person at `email`. */
  sessions(email?: string): SessionRow[];
  grants(email: string): Promise<GrantView[]>;
  /** Revokes one grant (as `gatehouse grants revoke --grant`); what it revoked. */
  revokeGrant(id: string): Promise<GrantView[]>;
  connections(userId: string): Promise<ConnectionRow[]>;
  /** Forgets a person's upstream connection to `server` (revoked at the service when it can). */
  disconnect(userId: string, server: string): Promise<string>;
  access(person: { email?: string; groups: readonly string[] }): AccessRow[];
  tools(): Promise<ToolRow[]>;
  /** Approves the held definition with this digest only (`tools approve --digest`). */
  approveTool(server: string, tool: string, digest: string): Promise<boolean>;
  /** Refuses the held definition with this digest: it stays unserved, marked refused. */
  refuseTool(server: string, tool: string, digest: string, by: string): Promise<boolean>;
  pins(): PinRow[];
  events: RecentEvents;
  /** Writes an audit line for an admin's action (and adds it to `events`). */
  auditAction(admin: string, action: string, fields: Record<string, string>): void;
}
