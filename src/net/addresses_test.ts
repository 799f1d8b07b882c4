import assert from "node:assert/strict";
import { isPublicAddress } from "./addresses.ts";

Deno.test("isPublicAddress() refuses loopback, private, link-local and embedded forms", () => {
  for (
    const address of [
      "127.0.0.1",
      "127.8.9.1",
      "10.1.2.3",
      "172.16.0.1",
      "172.31.255.255",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "224.0.0.1",
      "255.255.255.255",
      "::1",
      "::",
      "[::1]",
      "fd00::1",
      "fe80::1%eth0",
      "ff02::1",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "64:ff9b::10.0.0.1",
      "::127.0.0.1",
      // 6to4 addresses reach the IPv4 address they embed: 127.0.0.1, 10.0.0.1, 169.254.169.254.
      "2002:7f00:1::1",
      "2002:a00:1::",
      "2002:a9fe:a9fe::1",
      // Teredo, site-local, and the 6to4 relay anycast block.
      "2001:0:4136:e378:8000:63bf:3fff:fdd2",
      "fec0::1",
      "feff::1",
      "192.88.99.1",
      "not-an-ip",
      "1.2.3",
    ]
  ) assert.equal(isPublicAddress(address), false, address);
});

Deno.test("isPublicAddress() admits public unicast addresses", () => {
  for (
    const address of [
      "8.8.8.8",
      "172.32.0.1",
      "1.1.1.1",
      "2606:4700::1111",
      "::ffff:8.8.8.8",
      // A 6to4 address of a public IPv4 address, and the neighbours of the blocks refused.
      "2002:808:808::1",
      "2001:4860:4860::8888",
      "192.88.98.1",
    ]
  ) {
    assert.equal(isPublicAddress(address), true, address);
  }
});
