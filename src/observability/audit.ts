/**
 * The audit trail: who (person, client) called which server and tool, when, with what outcome
 * and how long it took. One JSON line per call, `msg: "audit"`, through the structured logger
 * (so it lands wherever the logs go and shares their redaction). Arguments are left out unless
 * the operator asks for them (`audit.arguments: true`): they often carry personal data.
 */
import type { Logger } from "./logger.ts";

export type AuditOutcome =
  | "ok"
  | "tool_error"
  | "error"
  | "timeout"
  | "cancelled"
  | "session_ended"
  /** The caller may not use what was asked (a tool policy); it never reached the backend. */
  | "refused";

export interface AuditEvent {
  user: string;
  email?: string;
  client?: string;
  /** The address the call came from (behind trustedProxies, the real client's). */
  address?: string;
  server: string;
  session: string;
  method: string;
  /** The tool or prompt name, or the resource URI. */
  target?: string;
  outcome: AuditOutcome;
  /** The JSON-RPC error code, for outcome "error". */
  errorCode?: number;
  durationMs: number;
  arguments?: unknown;
}

export interface AuditLog {
  /** Whether events carry the call's arguments. */
  readonly withArguments: boolean;
  record(event: AuditEvent): void;
}

/** The methods audited: the ones that act (tools) or read content (prompts, resources). */
export const AUDITED_METHODS = new Set(["tools/call", "prompts/get", "resources/read"]);

export function loggerAudit(logger: Logger, withArguments: boolean): AuditLog {
  return {
    withArguments,
    // Not copied: the logger copies each field onto its line.
    record: (event) => logger.info("audit", event as unknown as Record<string, unknown>),
  };
}

/**
 * A tool whose definition changed or is new (tool integrity): which server (an aggregate's
 * member) and tool, what was decided (`hold`, `refuse`, or `allow`: passed), the digests, and
 * a short field-level description of the change. Logged as an "audit" line with
 * `event: "tool_change"`.
 */
export interface ToolChangeAudit {
  server: string;
  tool: string;
  change: "new" | "changed";
  decision: "allow" | "hold" | "refuse";
  digest: string;
  previousDigest?: string;
  changes: string[];
  /** The aggregate it was seen through, and its name there. */
  via?: { server: string; name: string };
}

export function auditToolChange(logger: Logger, change: ToolChangeAudit): void {
  logger.warn("audit", { event: "tool_change", ...change });
}

/**
 * An ID-JAG presented at /token (enterprise-managed authorization): the issuer, subject,
 * client and `jti` it named (`verified` says whether its signature held first), and whether a
 * token was issued or which check refused it. Never
 * the assertion. Logged as an "audit" line with `event: "id_jag"`.
 */
export interface IdJagAudit {
  iss?: string;
  sub?: string;
  client: string;
  jti?: string;
  outcome: "issued" | "refused";
  /** False when the signature had not verified: iss, sub and jti are the sender's say-so. */
  verified: boolean;
  check?: string;
  reason?: string;
}

export function auditIdJag(logger: Logger, event: IdJagAudit): void {
  logger.info("audit", { event: "id_jag", ...event });
}

/**
 * A token the gateway asked the company identity provider for as a person (`userToken.kind:
 * exchange`): issued, refused (the person hears they may not, or must sign in again), or not
 * obtained because the provider could not be asked. Never the token. Logged as an "audit" line
 * with `event: "token_exchange"`.
 */
export interface TokenExchangeAudit {
  server: string;
  user: string;
  audience: string;
  outcome: "issued" | "refused" | "unavailable";
  reason?: string;
}

export function auditTokenExchange(logger: Logger, exchange: TokenExchangeAudit): void {
  const write = exchange.outcome === "issued" ? logger.info : logger.warn;
  write.call(logger, "audit", { event: "token_exchange", ...exchange });
}
