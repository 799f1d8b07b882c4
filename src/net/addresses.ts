/**
 * Which IP addresses an outbound fetch on a client's say-so may reach: public unicast only.
 * Loopback, private, link-local, carrier-grade NAT, multicast and reserved ranges (and IPv6
 * forms that embed them) are refused, so a URL cannot turn the gateway against its own network.
 * Addresses are read by core/ip_ranges.ts, as `trustedProxies` reads them: one parser for both.
 */
import { parseIp } from "../core/ip_ranges.ts";

function isPublicIpv4([a, b, c]: number[]): boolean {
  if (a === 0 || a === 10 || a === 127 || a >= 224) return false;
  if (a === 100 && b >= 64 && b <= 127) return false;
  if (a === 169 && b === 254) return false;
  if (a === 172 && b >= 16 && b <= 31) return false;
  if (a === 192 && b === 168) return false;
  if (a === 192 && b === 0 && (c === 0 || c === 2)) return false;
  if (a === 192 && b === 88 && c === 99) return false; // 6to4 relay anycast (RFC 7526)
  if (a === 198 && (b === 18 || b === 19)) return false;
  if (a === 198 && b === 51 && c === 100) return false;
  if (a === 203 && b === 0 && c === 113) return false;
  return true;
}

function isPublicIpv6(groups: number[]): boolean {
  const [g0, g1] = groups;
  if (groups.every((g) => g === 0)) return false; // ::
  if (groups.slice(0, 7).every((g) => g === 0) && groups[7] === 1) return false; // ::1
  // ::ffff:a.b.c.d came as an IPv4 address already (parseIp).
  const embedded = [groups[6] >> 8, groups[6] & 255, groups[7] >> 8, groups[7] & 255];
  if (g0 === 0x64 && g1 === 0xff9b) return isPublicIpv4(embedded); // NAT64
  // 6to4 (RFC 3056): 2002:AABB:CCDD::/48 is reached through the IPv4 address AA.BB.CC.DD.
  if (g0 === 0x2002) return isPublicIpv4([g1 >> 8, g1 & 255, groups[2] >> 8, groups[2] & 255]);
  // Teredo (RFC 4380) tunnels to an IPv4 address hidden in the rest: never a destination.
  if (g0 === 0x2001 && g1 === 0) return false;
  if ((g0 & 0xffc0) === 0xfec0) return false; // site-local (deprecated, still routed inside sites)
  if ((g0 & 0xfe00) === 0xfc00) return false; // unique local
  if ((g0 & 0xffc0) === 0xfe80) return false; // link-local
  if ((g0 & 0xff00) === 0xff00) return false; // multicast
  if (g0 === 0x2001 && g1 === 0x0db8) return false; // documentation
  if (g0 === 0) return false; // other reserved forms, e.g. IPv4-compatible
  return true;
}

/** True for a public unicast address; false for anything else, including non-addresses. */
export function isPublicAddress(text: string): boolean {
  const ip = addressOf(text);
  if (!ip) return false;
  return ip.family === 4
    ? isPublicIpv4(parts(ip.value, 4, 8))
    : isPublicIpv6(parts(ip.value, 8, 16));
}

export function isIpLiteral(host: string): boolean {
  return addressOf(host) !== undefined;
}

/** An address as a URL's host writes it (IPv6 in brackets) or bare, parsed as core/ip_ranges.ts does. */
function addressOf(text: string): { family: 4 | 6; value: bigint } | undefined {
  return parseIp(text.replace(/^\[|\]$/g, ""));
}

/** `value` as `count` numbers of `bits` bits each, the most significant first. */
function parts(value: bigint, count: number, bits: number): number[] {
  const mask = (1n << BigInt(bits)) - 1n;
  return Array.from(
    { length: count },
    (_, i) => Number((value >> BigInt(bits * (count - 1 - i))) & mask),
  );
}
