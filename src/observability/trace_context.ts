/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/) as text: the `traceparent` a client
 * sends (in a header, or in `params._meta` as MCP's SEP-414 puts it) read into its parts, and
 * the gateway's own span written back out. Pure, so it is tested without a tracer.
 */

/** The parts of a `traceparent`: ids in lower-case hex, flags as a number (bit 0 = sampled). */
export interface TraceParent {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

/** Version 00 is the one this reads; a later version keeps these four fields in front. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

/**
 * `text` read as a `traceparent`, or undefined when it is not one (W3C §3.2.2): wrong shape,
 * version ff, an all-zero id, or a version-00 value with anything after the flags.
 */
export function parseTraceparent(text: unknown): TraceParent | undefined {
  if (typeof text !== "string" || text.length > 512) return undefined;
  const match = TRACEPARENT.exec(text.trim());
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match;
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  return { traceId, spanId, traceFlags: parseInt(flags, 16) };
}

/** The `traceparent` (version 00) naming span `spanId` of trace `traceId`. */
export function formatTraceparent(parent: TraceParent): string {
  const flags = (parent.traceFlags & 0xff).toString(16).padStart(2, "0");
  return `00-${parent.traceId}-${parent.spanId}-${flags}`;
}

/** A `tracestate` worth passing on: a short printable string (W3C caps it at 32 entries). */
export function saneTracestate(text: unknown): string | undefined {
  if (typeof text !== "string" || text.length === 0 || text.length > 512) return undefined;
  return /^[\x20-\x7e]+$/.test(text) ? text : undefined;
}
