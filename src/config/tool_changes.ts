/**
 * What the gateway does when a server changes a tool's definition after it was approved
 * (`toolChanges:`), and the digests an operator pinned after reviewing a server offline
 * (`tools.pinned:`). Only servers with a backend of their own have them: an aggregate's tools
 * are its members', and each member's own settings apply to them.
 */
import { inRanges, type IpRange, parseCidr } from "../core/ip_ranges.ts";
import { isLoopbackHost } from "../core/loopback.ts";
import { type Checker, describe } from "./checker.ts";
import type { ConfigPath } from "./issues.ts";
import type { ToolChanges } from "./types.ts";

/** The values of `toolChanges:`. */
export const TOOL_CHANGES: readonly ToolChanges[] = ["allow", "hold", "refuse"];
const SHA256 = /^(sha256:)?[0-9a-f]{64}$/;

/**
 * `toolChanges:`, or its default: `hold` for an HTTP backend on a host that may belong to
 * someone else, `allow` for a program the gateway starts and for a backend on this machine or
 * a private network (loopback, a private or link-local address, a name without a dot).
 */
export function parseToolChanges(
  c: Checker,
  value: unknown,
  path: ConfigPath,
  transport: unknown,
  url: unknown,
): { toolChanges: ToolChanges; toolChangesDefaulted: boolean } {
  if (value !== undefined) {
    if (TOOL_CHANGES.includes(value as ToolChanges)) {
      return { toolChanges: value as ToolChanges, toolChangesDefaulted: false };
    }
    c.fail(path, `unknown value ${describe(value)}`, `one of: ${TOOL_CHANGES.join(", ")}`);
  }
  const remote = transport !== "stdio" && typeof url === "string" && isRemoteUrl(url);
  return { toolChanges: remote ? "hold" : "allow", toolChangesDefaulted: true };
}

/** Whether `url`'s host may be someone else's: not loopback, not a private address. */
export function isRemoteUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url.replace(/\{\{[^}]*\}\}/g, "x")).hostname.toLowerCase();
  } catch {
    return true;
  }
  if (isLoopbackHost(host) || host.endsWith(".localhost")) return false;
  // An address literal is read as every address in the gateway is (core/ip_ranges.ts), so an
  // IPv4-mapped IPv6 literal ([::ffff:10.0.0.1]) is the IPv4 address it carries.
  const literal = host.startsWith("[") ? host.slice(1, -1) : host;
  if (/^[\d.]+$/.test(literal) || literal.includes(":")) {
    return !inRanges(literal, PRIVATE_RANGES);
  }
  // A single-label name (a container or a host on the local network) resolves nowhere public.
  return host.includes(".") && !host.endsWith(".internal") && !host.endsWith(".local");
}

/** Loopback, private, shared (CGNAT) and link-local addresses: this machine or its networks. */
const PRIVATE_RANGES: IpRange[] = [
  "127.0.0.0/8",
  "10.0.0.0/8",
  "172.16.0.0/12",
  "192.168.0.0/16",
  "169.254.0.0/16",
  "100.64.0.0/10",
  "::1/128",
  "fc00::/7",
  "fe80::/10",
].map((text) => parseCidr(text)!);

/** `tools.pinned:`: tool name → SHA-256 of its definition (as `gatehouse tools list` shows). */
export function parseToolPins(
  c: Checker,
  value: unknown,
  path: ConfigPath,
): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  const pins: Record<string, string> = {};
  for (const [tool, digest] of Object.entries(c.stringMap(value, path))) {
    const text = digest.toLowerCase();
    if (!SHA256.test(text)) {
      c.fail(
        [...path, tool],
        `not a SHA-256 digest: ${describe(digest)}`,
        "64 hex digits, as the DIGEST column of gatehouse tools list shows",
      );
      continue;
    }
    pins[tool] = text.replace(/^sha256:/, "");
  }
  return pins;
}
