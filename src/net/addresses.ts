/**
 * Which IP addresses an outbound fetch on a client's say-so may reach: public unicast only.
 * Loopback, private, link-local, carrier-grade NAT, multicast and reserved ranges (and IPv6
 * forms that embed them) are refused, so a URL cannot turn the gateway against its own network.
 */

function ipv4Octets(text: string): number[] | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  const octets = parts.map((part) => /^\d{1,3}$/.test(part) ? Number(part) : NaN);
  return octets.every((o) => o >= 0 && o <= 255) ? octets : undefined;
}

function isPublicIpv4([a, b, c]: number[]): boolean {
  if (a === 0 || a === 10 || a === 127 || a >= 224) return false;
  if (a === 100 && b >= 64 && b <= 127) return false;
  if (a === 169 && b === 254) return false;
  if (a === 172 && b >= 16 && b <= 31) return false;
  if (a === 192 && b === 168) return false;
  if (a === 192 && b === 0 && (c === 0 || c === 2)) return false;
  if (a === 198 && (b === 18 || b === 19)) return false;
  if (a === 198 && b === 51 && c === 100) return false;
  if (a === 203 && b === 0 && c === 113) return false;
  return true;
}

/** The eight 16-bit groups of an IPv6 address, or undefined. */
function ipv6Groups(text: string): number[] | undefined {
  let address = text.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (v4) {
    const octets = ipv4Octets(v4[1]);
    if (!octets) return undefined;
    address = address.slice(0, -v4[1].length) +
      `${((octets[0] << 8) | octets[1]).toString(16)}:${
        ((octets[2] << 8) | octets[3]).toString(16)
      }`;
  }
  const halves = address.split("::");
  if (halves.length > 2) return undefined;
  const parse = (part: string) => part === "" ? [] : part.split(":").map((g) => parseInt(g, 16));
  const head = parse(halves[0]);
  const tail = halves.length === 2 ? parse(halves[1]) : [];
  const fill = 8 - head.length - tail.length;
  if (halves.length === 1 ? head.length !== 8 : fill < 1) return undefined;
  const groups = [...head, ...Array(halves.length === 2 ? fill : 0).fill(0), ...tail];
  return groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

function isPublicIpv6(groups: number[]): boolean {
  const [g0, g1] = groups;
  if (groups.every((g) => g === 0)) return false; // ::
  if (groups.slice(0, 7).every((g) => g === 0) && groups[7] === 1) return false; // ::1
  const embedded = [groups[6] >> 8, groups[6] & 255, groups[7] >> 8, groups[7] & 255];
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return isPublicIpv4(embedded); // ::ffff:a.b.c.d
  }
  if (g0 === 0x64 && g1 === 0xff9b) return isPublicIpv4(embedded); // NAT64
  if ((g0 & 0xfe00) === 0xfc00) return false; // unique local
  if ((g0 & 0xffc0) === 0xfe80) return false; // link-local
  if ((g0 & 0xff00) === 0xff00) return false; // multicast
  if (g0 === 0x2001 && g1 === 0x0db8) return false; // documentation
  if (g0 === 0) return false; // other reserved forms, e.g. IPv4-compatible
  return true;
}

/** True for a public unicast address; false for anything else, including non-addresses. */
export function isPublicAddress(text: string): boolean {
  const v4 = ipv4Octets(text);
  if (v4) return isPublicIpv4(v4);
  const v6 = ipv6Groups(text);
  return v6 ? isPublicIpv6(v6) : false;
}

export function isIpLiteral(host: string): boolean {
  return ipv4Octets(host) !== undefined || ipv6Groups(host) !== undefined;
}
