import assert from "node:assert/strict";
import { parseConfigText } from "./load.ts";

const SERVER = `servers:
  demo:
    transport: stdio
    command: cat
    serviceAuths: [{ type: bearer, tokens: [t] }]
`;
const noEnv = () => undefined;

Deno.test("parseConfigText() puts --port over listen's port, and a baseUrl left out follows it", () => {
  const config = parseConfigText(`listen: 0.0.0.0:8080\n${SERVER}`, noEnv, "c.yaml", {
    port: 9000,
  });
  assert.deepEqual(config.listen, { hostname: "0.0.0.0", port: 9000 });
  assert.equal(config.baseUrl, "http://localhost:9000");
  const unset = parseConfigText(SERVER, noEnv, "c.yaml", { port: 9001 });
  assert.deepEqual(unset.listen, { hostname: "127.0.0.1", port: 9001 });
  assert.equal(unset.baseUrl, "http://127.0.0.1:9001");
});

Deno.test("parseConfigText() warns when a baseUrl on this machine names another port than listen", () => {
  const config = parseConfigText(
    `listen: 127.0.0.1:9090\nbaseUrl: http://localhost:8080\n${SERVER}`,
    noEnv,
    "c.yaml",
  );
  const ofBaseUrl = config.warnings.filter((w) => w.path[0] === "baseUrl");
  assert.deepEqual(ofBaseUrl.map((w) => [w.path.join("."), w.line, w.message]), [
    ["baseUrl", 2, "is on this machine at port 8080, but listen: gives port 9090"],
  ]);
  assert.match(ofBaseUrl[0].hint!, /leave baseUrl out to have it follow listen:/);
  // --port moves listen away from a baseUrl written for the old port: said too.
  const moved = parseConfigText(
    `listen: 127.0.0.1:8080\nbaseUrl: http://127.0.0.1:8080\n${SERVER}`,
    noEnv,
    "c.yaml",
    { port: 8081 },
  );
  assert.equal(moved.warnings.filter((w) => w.path[0] === "baseUrl").length, 1);
});

Deno.test("parseConfigText() has no port warning for a public baseUrl, a matching one or listen port 0", () => {
  for (
    const head of [
      "listen: 127.0.0.1:9090\nbaseUrl: https://gw.example.com",
      "listen: 127.0.0.1:8080\nbaseUrl: http://localhost:8080/gateway",
      "listen: 127.0.0.1:80\nbaseUrl: http://127.0.0.1",
      "listen: 127.0.0.1:0\nbaseUrl: http://localhost:8080",
    ]
  ) {
    const config = parseConfigText(`${head}\n${SERVER}`, noEnv, "c.yaml");
    assert.deepEqual(config.warnings.filter((w) => w.path[0] === "baseUrl"), [], head);
  }
});
