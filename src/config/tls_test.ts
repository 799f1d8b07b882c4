import assert from "node:assert/strict";
import { parseConfigText } from "./load.ts";

const SERVERS = `servers:
  a: { transport: stdio, command: x, public: true }
`;
const parse = (yaml: string) => parseConfigText(yaml + SERVERS, () => undefined);
const refusal = (yaml: string) => {
  try {
    parse(yaml);
  } catch (error) {
    return (error as Error).message;
  }
  return "accepted";
};

Deno.test("parseConfigText() reads tls: files and redirectHttp; a plain-HTTP warning does not apply", () => {
  const config = parse(`baseUrl: https://gw.example.com
tls: { cert: /etc/tls/cert.pem, key: /etc/tls/key.pem, redirectHttp: ":80" }
`);
  assert.deepEqual(config.tls, {
    files: { certFile: "/etc/tls/cert.pem", keyFile: "/etc/tls/key.pem" },
    redirectHttp: { hostname: "0.0.0.0", port: 80 },
  });
  assert.deepEqual(config.warnings, []);
});

Deno.test("parseConfigText() reads tls.acme with Let's Encrypt's directory and baseUrl's host", () => {
  const config = parse(`baseUrl: https://gw.example.com
tls: { acme: { email: ops@example.com }, redirectHttp: "10.0.0.5:80" }
`);
  assert.deepEqual(config.tls?.acme, {
    directory: "https://acme-v02.api.letsencrypt.org/directory",
    email: "ops@example.com",
    caRootsFile: undefined,
    renewBeforeMs: 30 * 24 * 3600_000,
    domain: "gw.example.com",
  });
  assert.deepEqual(config.tls?.redirectHttp, { hostname: "10.0.0.5", port: 80 });
});

Deno.test("parseConfigText() refuses tls: that cannot work, saying why", () => {
  const https = "baseUrl: https://gw.example.com\n";
  assert.match(refusal(https + "tls: { cert: a.pem }\n"), /tls\.key: is required/);
  assert.match(
    refusal(https + "tls: { cert: a.pem, key: b.pem, acme: {} }\n"),
    /tls\.acme: give either cert and key, or acme, not both/,
  );
  assert.match(refusal(https + "tls: { acme: {} }\n"), /tls\.redirectHttp: is required with acme/);
  assert.match(
    refusal("baseUrl: https://10.0.0.1\ntls: { acme: {}, redirectHttp: ':80' }\n"),
    /baseUrl: must name a host, not an IP address/,
  );
  assert.match(
    refusal(https + "tls: { cert: a.pem, key: b.pem }\nconnections: { front: false }\n"),
    /connections\.front: must stay true with tls/,
  );
  assert.match(
    refusal(https + "tls: { cert: a, key: b, redirectHttp: 80 }\n"),
    /expected \[host\]:port/,
  );
});

Deno.test("parseConfigText() warns when tls: serves https and baseUrl says http", () => {
  const config = parse("listen: 0.0.0.0:443\ntls: { cert: a.pem, key: b.pem }\n");
  assert.deepEqual(config.warnings.map((w) => w.path.join(".")), ["baseUrl"]);
  assert.match(config.warnings[0].message, /is http but tls: serves https/);
});
