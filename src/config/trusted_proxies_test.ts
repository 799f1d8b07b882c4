import assert from "node:assert/strict";
import { parseConfigText } from "./load.ts";

const SERVERS = `servers:
  a: { transport: stdio, command: x, public: true }
`;

const paths = (yaml: string) =>
  parseConfigText(yaml + SERVERS, () => undefined).warnings.map((w) => w.path.join("."));

Deno.test("parseConfigText() warns when baseUrl is https, Gatehouse serves plain HTTP and trusts no proxy", () => {
  assert.deepEqual(paths("baseUrl: https://gw.example.com\n"), ["trustedProxies"]);
  assert.deepEqual(paths("baseUrl: https://gw.example.com\ntrustedProxies: [10.0.0.0/8]\n"), []);
  assert.deepEqual(paths("baseUrl: http://localhost:8080\n"), []);
});

Deno.test("parseConfigText() refuses a trustedProxies entry that is not an address or range, naming it", () => {
  assert.throws(
    () =>
      parseConfigText("trustedProxies: [10.0.0.0/8, proxy.internal]\n" + SERVERS, () => undefined),
    /trustedProxies\[1\]: not an IP address or CIDR range: "proxy\.internal"/s,
  );
});

Deno.test("parseConfigText() warns what connections.front: false gives up", () => {
  const config = parseConfigText(
    "trustedProxies: [127.0.0.1]\nconnections: { front: false }\n" + SERVERS,
    () => undefined,
  );
  assert.equal(config.connections.front, false);
  const [warning] = config.warnings;
  assert.deepEqual(warning.path, ["connections", "front"]);
  assert.match(warning.message, /no headerTimeout.*no connection cap/);
});
