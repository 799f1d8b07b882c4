/**
 * `trustedProxies:` the proxies whose `Forwarded` / `X-Forwarded-For` headers name the real
 * client (src/net/client_address.ts), as CIDR ranges; and the warning for a gateway that is
 * published over https by something else yet trusts no proxy to say who the client is.
 */
import { type IpRange, parseCidr } from "../core/ip_ranges.ts";
import { type Checker, describe } from "./checker.ts";

export function parseTrustedProxies(c: Checker, value: unknown): IpRange[] {
  return c.stringList(value, ["trustedProxies"]).flatMap((text, i) => {
    const range = parseCidr(text);
    if (range) return [range];
    c.fail(
      ["trustedProxies", i],
      `not an IP address or CIDR range: ${describe(text)}`,
      'write e.g. "10.0.0.0/8", "127.0.0.1" or "fd00::/8"',
    );
    return [];
  });
}

/**
 * baseUrl says https but the gateway serves plain HTTP: something in front terminates TLS. If
 * none of its addresses is trusted, every request seems to come from it.
 */
export function warnWithoutTrustedProxies(
  c: Checker,
  baseUrl: string,
  servesHttps: boolean,
  trusted: readonly IpRange[],
): void {
  if (!baseUrl.startsWith("https:") || servesHttps || trusted.length > 0) return;
  c.warn(
    ["trustedProxies"],
    "baseUrl is https but Gatehouse serves plain HTTP and trusts no proxy: every client will share the proxy's address, so per-address limits become shared and the audit names the proxy",
    "list the proxy's address under trustedProxies (e.g. [127.0.0.1]), or let Gatehouse serve https itself (tls:)",
  );
}
