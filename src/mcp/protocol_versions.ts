/**
 * The MCP protocol revisions the gateway speaks, and every rule that depends on which one is
 * in use: what initialize agrees on, which `MCP-Protocol-Version` headers pass, what a
 * revision's streams look like. Front, backends and aggregates ask here instead of comparing
 * date strings of their own, so a new revision is added in this one file.
 */
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "../sdk.ts";

/** The session revisions (those opened by `initialize`), newest first. */
export const SESSION_PROTOCOL_VERSIONS: readonly string[] = [...SUPPORTED_PROTOCOL_VERSIONS];

/** The newest session revision: offered when a client asks for one the gateway lacks. */
export const LATEST_SESSION_PROTOCOL_VERSION: string = LATEST_PROTOCOL_VERSION;

/**
 * The revision a session speaks before initialize has agreed on one: a client that sends no
 * `MCP-Protocol-Version` header is taken to speak this (MCP 2025-06-18, "Protocol Version
 * Header").
 */
export const ASSUMED_PROTOCOL_VERSION = "2025-03-26";

/** Since this revision a POST's SSE stream opens with an empty priming event (SEP-1699). */
const PRIMING_SINCE = "2025-11-25";

export function isSupportedProtocolVersion(version: string): boolean {
  return SESSION_PROTOCOL_VERSIONS.includes(version);
}

/**
 * The revision to answer `initialize` with: the one asked for when the gateway speaks it,
 * otherwise the newest (the client then decides whether it can go on).
 */
export function negotiateProtocolVersion(requested: unknown): string {
  return typeof requested === "string" && isSupportedProtocolVersion(requested)
    ? requested
    : LATEST_SESSION_PROTOCOL_VERSION;
}

/** Whether a client of this revision expects the priming event on a new SSE stream. */
export function expectsPrimingEvent(version: string): boolean {
  return version >= PRIMING_SINCE;
}

/**
 * What is wrong with a request's `MCP-Protocol-Version` header, or undefined when it may pass.
 * No header is allowed: the client then speaks `ASSUMED_PROTOCOL_VERSION`.
 */
export function protocolVersionHeaderProblem(header: string | null): string | undefined {
  if (header === null || isSupportedProtocolVersion(header)) return undefined;
  return `Bad Request: unsupported MCP-Protocol-Version "${header.slice(0, 40)}"; ` +
    `this gateway speaks ${SESSION_PROTOCOL_VERSIONS.join(", ")}`;
}
