/**
 * The address of the client a request really came from (`trustedProxies`). The socket's peer
 * (what the TCP front saw, or `Deno.serve`'s remote address without the front) is the client
 * unless it is a trusted proxy; then the proxy's `Forwarded` (RFC 7239), or else its
 * `X-Forwarded-For`, is read from the right: each trusted proxy appended the address it saw, so
 * the right-most address that is not itself a trusted proxy is the client. Anything to its left
 * was written by the client and is never believed. From a peer that is not trusted both headers
 * are ignored: a client cannot name itself someone else.
 */
import { inRanges, type IpRange, parseIp } from "../core/ip_ranges.ts";

/** The client's address: `peer` unless a trusted proxy forwarded the request for someone. */
export function clientAddress(
  peer: string | undefined,
  headers: Headers,
  trusted: readonly IpRange[],
): string | undefined {
  if (peer === undefined || trusted.length === 0 || !inRanges(peer, trusted)) return peer;
  const forwarded = headers.get("forwarded");
  const chain = forwarded !== null
    ? forwardedFor(forwarded)
    : (headers.get("x-forwarded-for") ?? "").split(",").map((part) => part.trim())
      .filter((part) => part !== "");
  let client = peer;
  for (let i = chain.length - 1; i >= 0; i--) {
    const address = bareAddress(chain[i]);
    // "unknown", an obfuscated name or garbage: the hop to its right is as far as is known.
    if (address === undefined) break;
    client = address;
    if (!inRanges(address, trusted)) break;
  }
  return client;
}

/** The `for=` values of a `Forwarded` field, in order (one per element; elements without one skipped). */
export function forwardedFor(field: string): string[] {
  const found: string[] = [];
  for (const element of splitOutsideQuotes(field, ",")) {
    for (const pair of splitOutsideQuotes(element, ";")) {
      const equals = pair.indexOf("=");
      if (equals < 0 || pair.slice(0, equals).trim().toLowerCase() !== "for") continue;
      let value = pair.slice(equals + 1).trim();
      if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
        value = value.slice(1, -1).replace(/\\(.)/g, "$1");
      }
      found.push(value);
    }
  }
  return found;
}

/** An address with its port and brackets taken off (`[2001:db8::1]:4711`, `192.0.2.1:80`). */
function bareAddress(text: string): string | undefined {
  let address = text.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed) address = bracketed[1];
  else if (/^[\d.]+:\d+$/.test(address)) address = address.slice(0, address.lastIndexOf(":"));
  return parseIp(address) ? address : undefined;
}

function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === "\\" && quoted) i++;
    else if (char === '"') quoted = !quoted;
    else if (char === separator && !quoted) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((part) => part.trim()).filter((part) => part !== "");
}
