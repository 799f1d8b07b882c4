/**
 * IP addresses and CIDR ranges as numbers, for `trustedProxies` (config checks the list, the
 * http layer asks whether a peer is in it). IPv4-mapped IPv6 addresses (`::ffff:10.0.0.1`, as a
 * dual-stack socket reports an IPv4 peer) match IPv4 ranges, so one list serves both stacks.
 */

export interface IpRange {
  /** 4 or 6. */
  family: 4 | 6;
  /** The network's first address (host bits cleared). */
  base: bigint;
  prefix: number;
  /** As written, for messages. */
  text: string;
}

/** An address as a number and its family; undefined for anything that is not one. */
export function parseIp(text: string): { family: 4 | 6; value: bigint } | undefined {
  const v4 = ipv4Value(text);
  if (v4 !== undefined) return { family: 4, value: v4 };
  const v6 = ipv6Value(text);
  if (v6 === undefined) return undefined;
  // ::ffff:a.b.c.d is an IPv4 peer on a dual-stack socket.
  if (v6 >> 32n === 0xffffn) return { family: 4, value: v6 & 0xffffffffn };
  return { family: 6, value: v6 };
}

/** `10.0.0.0/8`, `fd00::/8`, or a single address (a /32 or /128); undefined if neither. */
export function parseCidr(text: string): IpRange | undefined {
  const [address, bits, extra] = text.trim().split("/");
  if (extra !== undefined) return undefined;
  const ip = parseIp(address);
  if (!ip) return undefined;
  const width = ip.family === 4 ? 32 : 128;
  let prefix = width;
  if (bits !== undefined) {
    if (!/^\d{1,3}$/.test(bits)) return undefined;
    prefix = Number(bits);
    // A mapped address with a prefix counts the IPv6 bits: ::ffff:10.0.0.0/104 is 10.0.0.0/8.
    if (ip.family === 4 && ipv4Value(address) === undefined) prefix -= 96;
    if (prefix < 0 || prefix > width) return undefined;
  }
  const hostBits = BigInt(width - prefix);
  return { family: ip.family, base: (ip.value >> hostBits) << hostBits, prefix, text };
}

/** Whether `address` (text) lies in any of `ranges`. */
export function inRanges(address: string, ranges: readonly IpRange[]): boolean {
  const ip = parseIp(address);
  if (!ip) return false;
  return ranges.some((range) => {
    if (range.family !== ip.family) return false;
    const hostBits = BigInt((range.family === 4 ? 32 : 128) - range.prefix);
    return (ip.value >> hostBits) << hostBits === range.base;
  });
}

function ipv4Value(text: string): bigint | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return undefined;
    value = (value << 8n) | BigInt(part);
  }
  return value;
}

function ipv6Value(text: string): bigint | undefined {
  let address = text.replace(/%.*$/, "");
  if (!/^[0-9a-fA-F:.]+$/.test(address) || !address.includes(":")) return undefined;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (v4) {
    const value = ipv4Value(v4[1]);
    if (value === undefined) return undefined;
    address = address.slice(0, -v4[1].length) +
      `${(value >> 16n).toString(16)}:${(value & 0xffffn).toString(16)}`;
  }
  const halves = address.split("::");
  if (halves.length > 2) return undefined;
  const groups = (part: string) => part === "" ? [] : part.split(":");
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  const fill = 8 - head.length - tail.length;
  if (halves.length === 1 ? head.length !== 8 : fill < 1) return undefined;
  const all = [...head, ...Array<string>(halves.length === 2 ? fill : 0).fill("0"), ...tail];
  let value = 0n;
  for (const group of all) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return undefined;
    value = (value << 16n) | BigInt(parseInt(group, 16));
  }
  return value;
}
