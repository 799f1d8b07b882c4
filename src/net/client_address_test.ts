import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { parseCidr } from "../core/ip_ranges.ts";
import { clientAddress, forwardedFor } from "./client_address.ts";

const trusted = ["10.0.0.0/8", "127.0.0.1", "fd00::/8"].map((text) => parseCidr(text)!);
const headers = (init: Record<string, string>) => new Headers(init);

Deno.test("clientAddress() takes the right-most untrusted X-Forwarded-For address from a trusted proxy", () => {
  const h = headers({ "x-forwarded-for": "6.6.6.6, 203.0.113.7, 10.1.2.3" });
  assertEquals(clientAddress("127.0.0.1", h, trusted), "203.0.113.7");
});

Deno.test("clientAddress() ignores the headers from a peer that is not trusted", () => {
  const h = headers({ "x-forwarded-for": "6.6.6.6", forwarded: "for=6.6.6.6" });
  assertEquals(clientAddress("198.51.100.9", h, trusted), "198.51.100.9");
  assertEquals(clientAddress("127.0.0.1", h, []), "127.0.0.1");
});

Deno.test("clientAddress() prefers Forwarded over X-Forwarded-For, ports and brackets taken off", () => {
  const h = headers({
    forwarded: 'for=6.6.6.6, for="[2001:db8:cafe::17]:4711";proto=https, for=10.0.0.2:99',
    "x-forwarded-for": "5.5.5.5",
  });
  assertEquals(clientAddress("::ffff:127.0.0.1", h, trusted), "2001:db8:cafe::17");
});

Deno.test("clientAddress() stops at an address it cannot read, keeping the hop to its right", () => {
  const h = headers({ forwarded: "for=6.6.6.6, for=unknown, for=10.0.0.5" });
  assertEquals(clientAddress("10.9.9.9", h, trusted), "10.0.0.5");
  assertEquals(
    clientAddress("10.9.9.9", headers({ forwarded: "for=_hidden" }), trusted),
    "10.9.9.9",
  );
});

Deno.test("clientAddress() gives the left-most address when every hop is trusted", () => {
  const h = headers({ "x-forwarded-for": "10.0.0.1, 10.0.0.2" });
  assertEquals(clientAddress("127.0.0.1", h, trusted), "10.0.0.1");
});

Deno.test("forwardedFor() reads quoted values with commas and semicolons inside", () => {
  assertEquals(forwardedFor('for="a;b,c", for=d;by=e'), ["a;b,c", "d"]);
});

Deno.test("parseCidr() refuses what is not a range and clears host bits", () => {
  assertEquals(parseCidr("10.1.2.3/8")?.base, 10n << 24n);
  assertEquals(parseCidr("10.0.0.0/33"), undefined);
  assertEquals(parseCidr("example.com"), undefined);
  assertEquals(parseCidr("::ffff:10.0.0.0/104")?.prefix, 8);
});
